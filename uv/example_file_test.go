package uv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A file written, then read back with a request event, on the pure-Go
// driver (the one a build without cgo gets): the same calls and results
// as on libuv's (see ExampleOpenFile).
func ExampleFile_ReadAsync() {
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverGo})
	if err != nil {
		panic(err)
	}
	go r.Serve(context.Background())
	defer r.Close() // stops Serve and waits for it
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)
	f, err := uv.OpenFile(context.Background(), r, filepath.Join(dir, "note"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	f.Write([]byte("written through a File"))
	q, _ := f.ReadAsync(7, 0) // a *uv.FSRequest[[]byte]
	b, err := q.Await(context.Background())
	fmt.Printf("%q %v\n", b, err)
	fmt.Println(q.Info() == "FS(read "+f.Name()+")")
	f.Close()
	// Output:
	// "written" <nil>
	// true
}
