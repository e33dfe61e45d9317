package reactor_test

import (
	"context"
	"fmt"

	"github.com/uvevent/uvevent/reactor"
)

// OnDone hands over the coroutine's result as its T.
func ExampleCoroutine_OnDone() {
	ctx := context.Background()
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	co, _ := reactor.Spawn(r, ctx, func(context.Context) (string, error) { return "spawned", nil })
	co.OnDone(func(v string, err error) { fmt.Println(v, err) })
	r.Run(ctx)
	// Output: spawned <nil>
}
