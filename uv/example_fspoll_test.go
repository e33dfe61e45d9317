package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// An FSPoll stats a path every interval, for file systems inotify cannot
// see: it reports each change with the stat before and after, and a
// failure once (here the file's removal).
func ExampleNewFSPoll() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	dir, _ := os.MkdirTemp("", "fspoll")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.log")
	os.WriteFile(path, []byte("started\n"), 0o600)

	p, err := uv.NewFSPoll(r, path, 10*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	changes := make(chan uv.FSPollResult, 16)
	gone := make(chan error, 1)
	p.OnChange(func(res uv.FSPollResult, err error) {
		if err != nil {
			gone <- err
			return
		}
		changes <- res
	})
	if err := p.Start(); err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	go r.Serve(ctx)

	// The first stat is the baseline: write until a stat after it sees the
	// file grow. (A stat may catch a write between its new modification
	// time and its new size: that is a change too, the size not yet grown.)
	var res uv.FSPollResult
	for res.Curr == nil || res.Curr.Size() <= res.Prev.Size() {
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.Write([]byte("more\n"))
		f.Close()
		select {
		case res = <-changes:
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			fmt.Println(ctx.Err())
			return
		}
	}
	fmt.Println(res.Curr.Name(), "grew:", res.Curr.Size() > res.Prev.Size())

	os.Remove(path)
	err = <-gone
	fmt.Println("removed:", errors.Is(err, fs.ErrNotExist))
	// Output:
	// app.log grew: true
	// removed: true
}
