package uv_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Two ends of a socket pair: what one writes, the other reads.
func ExamplePipe() {
	r, _ := reactor.New(reactor.Options{})
	defer serving(r)()
	a, b, err := uv.Pipe(r)
	if err != nil {
		panic(err)
	}
	a.Write([]byte("through the pipe"))
	a.Close()
	got, err := io.ReadAll(b)
	fmt.Printf("%s %v\n", got, err)
	b.Close()
	// Output:
	// through the pipe <nil>
}

// A file written and read back through libuv's file requests.
func ExampleOpenFile() {
	r, _ := reactor.New(reactor.Options{})
	defer serving(r)()
	dir, _ := os.MkdirTemp("", "uvevent")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	f, err := uv.OpenFile(ctx, r, filepath.Join(dir, "note"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	f.Write([]byte("written by uv_fs_write"))
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 11)
	fmt.Printf("%q %v\n", buf[:n], err)
	f.Close()
	// Output:
	// "uv_fs_writ" <nil>
}
