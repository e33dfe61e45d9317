package uv_test

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Backpressure with a high-water mark, in callbacks: the server produces
// records with Send while Queued stays below high (the IO's own mark, at
// which Send would refuse: see ExampleIO_OnDrain); there, it stops and
// asks DrainAsync to tell it when the queue is down to low, and goes on
// from that request's callback. A client that reads slowly (or not at all)
// holds the server's memory to about high, never more; CloseWrite ends the
// stream once everything queued is out.
func ExampleIO_DrainAsync() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	const high, low = 1 << 20, 256 << 10
	record := bytes.Repeat([]byte("x"), 64<<10)

	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	conns := map[*uv.IO]struct{}{} // an IO nobody holds is collected and closed
	event.Subscribe(ln, func(_ event.Event, res any, err error) {
		c, ok := res.(*uv.IO)
		if !ok {
			return
		}
		conns[c] = struct{}{}
		left := 128 // records to send: 8 MiB
		var produce func()
		produce = func() {
			for ; left > 0; left-- {
				if c.Queued() >= high {
					wait, err := c.DrainAsync(low)
					if err != nil {
						c.Close()
						return
					}
					event.Subscribe(wait, func(_ event.Event, _ any, err error) {
						if err != nil { // the connection failed or closed
							delete(conns, c)
							return
						}
						produce()
					})
					return
				}
				c.Send(record)
			}
			c.CloseWrite() // the end, once every record is out
		}
		produce()
	})
	ln.Start()

	c, err := uv.Dial(context.Background(), r, "tcp4", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	got, err := io.Copy(io.Discard, c)
	fmt.Println(got, err)

	c.Close()
	ln.Close()
	stop()
	<-served
	r.Close()
	// Output:
	// 8388608 <nil>
}
