package uv_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A server that drops a peer gone silent: each accepted connection gets
// keep-alive probes after 30 s idle, every 5 s, and is dropped (the read
// fails with ETIMEDOUT) after 4 unanswered ones. A connection has
// keep-alive off until asked, as in libuv.
func ExampleIO_SetKeepAliveConfig() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	ln, err := uv.ListenConfig{Backlog: 128}.Listen(r, "tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	set := make(chan error, 1)
	event.Subscribe(ln, func(_ event.Event, res any, err error) {
		c, ok := res.(*uv.IO)
		if !ok {
			return
		}
		set <- c.SetKeepAliveConfig(net.KeepAliveConfig{
			Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 4,
		})
		c.Close()
	})
	ln.Start()

	c, err := uv.Dial(context.Background(), r, "tcp4", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Println("keep-alive set:", <-set)

	c.Close()
	ln.Close()
	stop()
	<-served
	r.Close()
	// Output:
	// keep-alive set: <nil>
}
