package uv_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// serving runs r's loop on a goroutine until the returned function stops
// it (a Stop before the loop runs ends its first turn) and closes r.
func serving(r *reactor.Reactor) (done func()) {
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	return func() {
		r.Stop()
		<-served
		r.Close()
	}
}

// A datagram and its answer, with the addresses they came from. It runs
// on the build's driver: libuv with cgo, the pure-Go one without.
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
