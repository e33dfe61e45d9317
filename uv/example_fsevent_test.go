package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A recursive watch names changes by their path below the root. A path
// that does not exist is an error matching fs.ErrNotExist.
func ExampleNewFSEvent() {
	// The default driver: libuv, or the pure-Go one in a build without
	// cgo; FSEvent reports the same on both.
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	go r.Serve(ctx)
	root, _ := os.MkdirTemp("", "fsevent")
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, "logs", "old"), 0o700)

	f, err := uv.NewFSEvent(r, root, uv.FSEventOptions{Recursive: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	seen := make(chan uv.FSEventResult, 16)
	event.Subscribe(f, func(ev event.Event, res any, err error) {
		if err == nil {
			seen <- res.(uv.FSEventResult)
		}
	})
	if err := f.Start(); err != nil {
		fmt.Println(err)
		return
	}

	os.WriteFile(filepath.Join(root, "logs", "old", "x.log"), nil, 0o600)
	select {
	case res := <-seen:
		fmt.Printf("%s: %v\n", filepath.ToSlash(res.Name), res.Events)
	case <-ctx.Done():
		fmt.Println(ctx.Err())
	}

	_, err = uv.NewFSEvent(r, filepath.Join(root, "missing"), uv.FSEventOptions{})
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	// Output:
	// logs/old/x.log: rename
	// true
}
