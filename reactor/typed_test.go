package reactor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A coroutine's OnDone gives its T; a timer's OnFire hears its Close only
// with WithClose.
func TestOnDoneAndOnFire(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		ctx := context.Background()
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()

		co, err := reactor.Spawn(ctx, r, func(context.Context) (int, error) { return 7, nil })
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		if _, err := co.OnDone(func(v int, err error) { got = append(got, v) }); err != nil {
			t.Fatal(err)
		}

		tm, err := r.NewTimer(time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		var plain, with []string
		note := func(to *[]string) func(error) {
			return func(err error) {
				s := "fired"
				if errors.Is(err, event.ErrClosed) {
					s = "closed"
				}
				*to = append(*to, s)
			}
		}
		tm.OnFire(note(&plain))
		tm.OnFire(note(&with), event.WithClose)
		if err := r.Run(ctx); err != nil { // the coroutine ends; the timer never started
			t.Fatal(err)
		}
		tm.Close()
		if diff := cmp.Diff([]int{7}, got); diff != "" {
			t.Errorf("Coroutine.OnDone (-want +got):\n%s", diff)
		}
		if len(plain) != 0 || !cmp.Equal([]string{"closed"}, with) {
			t.Errorf("OnFire heard %v without WithClose, %v with; want none and [closed]", plain, with)
		}
	})
}
