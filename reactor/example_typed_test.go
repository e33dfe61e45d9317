package reactor_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"

	"github.com/uvevent/uvevent/reactor"
)

// OnDone hands over the coroutine's result as its T.
func ExampleCoroutine_OnDone() {
	ctx := context.Background()
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	co, _ := reactor.Spawn(ctx, r, func(context.Context) (string, error) { return "spawned", nil })
	co.OnDone(func(v string, err error) { fmt.Println(v, err) })
	r.Run(ctx)
	// Output: spawned <nil>
}

// Publish serves the reactor's Stats at /debug/vars (expvar), as JSON.
func ExampleReactor_Publish() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	if err := r.Publish("uvevent.example"); err != nil {
		fmt.Println(err)
		return
	}
	// What an HTTP GET of /debug/vars shows under "uvevent.example":
	var s reactor.Stats
	json.Unmarshal([]byte(expvar.Get("uvevent.example").String()), &s)
	fmt.Println("active:", s.Active, "coroutines:", s.Coroutines)
	fmt.Println(r.Publish("uvevent.example"))
	// Output:
	// active: 0 coroutines: 0
	// reactor: Publish("uvevent.example"): the name is taken: file exists
}
