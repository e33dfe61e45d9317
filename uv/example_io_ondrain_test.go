package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Backpressure with the IO's own high-water mark: the server Sends
// records until Send refuses with ErrQueueFull (the queue is at the mark,
// 1 MiB by default: nothing of the refused record was queued), and goes on
// from OnDrain, which fires once the queue fell below it. A client that
// reads slowly, or not at all, holds at most the mark plus one record of
// the server's memory.
func ExampleIO_OnDrain() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	record := bytes.Repeat([]byte("x"), 64<<10)
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	conns := map[*uv.IO]struct{}{} // an IO nobody holds is collected and closed
	ln.OnAccept(func(c *uv.IO, err error) {
		if err != nil {
			return
		}
		conns[c] = struct{}{}
		left := 128 // records to send: 8 MiB
		produce := func() {
			for ; left > 0; left-- {
				if err := c.Send(record); errors.Is(err, uv.ErrQueueFull) {
					return // OnDrain calls again
				} else if err != nil {
					c.Close()
					delete(conns, c)
					return
				}
			}
			c.CloseWrite() // the end, once every record is out
		}
		c.OnDrain(func(_ int, err error) {
			if err != nil { // the connection failed
				c.Close()
				delete(conns, c)
				return
			}
			produce()
		})
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
