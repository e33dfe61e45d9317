package async_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/async"
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
