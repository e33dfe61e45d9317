//go:build cgo

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

// serving runs r's loop on a goroutine until the returned function stops
// it and closes r.
func serving(r *reactor.Reactor) (done func()) {
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	return func() {
		stop()
		<-served
		r.Close()
	}
}

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

// A datagram and its answer, with the addresses they came from.
func ExampleListenUDP() {
	r, _ := reactor.New(reactor.Options{})
	defer serving(r)()
	a, _ := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	b, _ := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
	a.WriteTo([]byte("ping"), b.LocalAddr())
	buf := make([]byte, 64)
	n, from, _ := b.ReadFrom(buf)
	fmt.Println(string(buf[:n]), from.String() == a.LocalAddr().String())
	b.WriteTo([]byte("pong"), from)
	n, _, _ = a.ReadFrom(buf)
	fmt.Println(string(buf[:n]))
	a.Close()
	b.Close()
	// Output:
	// ping true
	// pong
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
