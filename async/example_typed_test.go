package async_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// OnDone hands over the value an Op received, sent or acquired as its T.
func ExampleOp_OnDone() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	ch, _ := async.NewChannel[string](r, 1)
	recv := ch.Recv()
	recv.OnDone(func(v string, err error) { fmt.Println("received", v, err) })
	recv.Start()
	ch.Send("hi").Start()
	r.RunOnce(context.Background())
	// Output: received hi <nil>
}

// OnFire runs when the timeout runs out, with event.ErrTimeout: the
// timeout's notification is its error.
func ExampleTimeout_OnFire() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	to, _ := async.NewTimeout(r, 10*time.Millisecond)
	to.OnFire(func(err error) { fmt.Println("fired:", errors.Is(err, event.ErrTimeout)) })
	to.Start()
	r.Run(context.Background())
	// Output: fired: true
}
