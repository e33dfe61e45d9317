package uv_test

import (
	"context"
	"fmt"
	"io"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// An echo server in callbacks: the listener's result is each accepted
// connection, an IO's result each read (a view of libuv's buffer, valid
// during the callback), answered with Send. The client uses the blocking
// net.Conn side of IO.
func ExampleListener() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

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
		event.Subscribe(c, func(ev event.Event, res any, err error) {
			if err != nil { // io.EOF: the client is done
				delete(conns, c)
				c.Close()
				return
			}
			c.Send(c.Result(res)) // the bytes read: res is a *[]byte
		})
		c.Start()
	})
	ln.Start()

	c, err := uv.Dial(context.Background(), r, "tcp4", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	c.Write([]byte("ping"))
	c.CloseWrite()
	echo, err := io.ReadAll(c)
	fmt.Printf("%s %v\n", echo, err)

	c.Close()
	ln.Close()
	stop()
	<-served
	r.Close()
	// Output:
	// ping <nil>
}
