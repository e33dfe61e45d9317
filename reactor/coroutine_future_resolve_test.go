package reactor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// A future whose only subscriber is a cooperative coroutine's wait is
// delivered to it without the general notification pass; these pin that
// the outcome, the future's state and what a hook or a second subscriber
// see are those of the general pass, on both drivers.
func TestFutureResolveToCoroutineWait(t *testing.T) {
	errBoom := errors.New("boom")
	type seen struct {
		Got       int
		Err       string
		Done      bool // after Resolve returned, in the resolving coroutine
		Closed    bool
		Subs      int
		Outcome   int
		HookSaw   any
		OtherSaw  any
		Unhandled bool // an "unhandled error" report
	}
	cases := []struct {
		name string
		// prepare runs in the waiting coroutine before its Await.
		prepare func(f *event.Future[int], s *seen)
		settle  func(f *event.Future[int]) error
		want    seen
	}{
		{
			name:   "resolved",
			settle: func(f *event.Future[int]) error { return f.Resolve(7) },
			want:   seen{Got: 7, Done: true, Closed: true, Outcome: 7},
		},
		{
			name:   "rejected",
			settle: func(f *event.Future[int]) error { return f.Reject(errBoom) },
			want:   seen{Err: "boom", Done: true, Closed: true},
		},
		{
			name: "with a notify hook",
			prepare: func(f *event.Future[int], s *seen) {
				f.SetNotifyHook(func(_ event.Event, result any, err error) (any, error, bool) {
					s.HookSaw = result
					return 8, err, true
				})
			},
			settle: func(f *event.Future[int]) error { return f.Resolve(7) },
			want:   seen{Got: 8, Done: true, Closed: true, Outcome: 7, HookSaw: 7},
		},
		{
			name: "with a second subscriber",
			prepare: func(f *event.Future[int], s *seen) {
				f.AddCallback(event.NewCallback(func(_ event.Event, result any, _ error) { s.OtherSaw = result }))
			},
			settle: func(f *event.Future[int]) error { return f.Resolve(7) },
			want:   seen{Got: 7, Done: true, Closed: true, Outcome: 7, OtherSaw: 7},
		},
	}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rep := &reports{}
				r := conform.NewReactor(t, reactor.Options{Driver: d, OnReport: rep.add})
				f := event.NewFuture[int](r)
				var s seen
				ctx := runCtx(t)
				reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
					if c.prepare != nil {
						c.prepare(f, &s)
					}
					v, err := f.Await(ctx)
					s.Got = v
					if err != nil {
						s.Err = err.Error()
					}
					return 0, nil
				})
				reactor.Spawn(ctx, r, func(context.Context) (int, error) {
					if err := c.settle(f); err != nil {
						t.Errorf("settle: %v", err)
					}
					s.Done, s.Closed = f.Done(), f.Flags().Has(event.Closed)
					s.Subs = eventkind.Subscribers(f)
					s.Outcome, _, _ = f.Outcome()
					return 0, nil
				})
				if err := r.Run(ctx); err != nil {
					t.Fatal(err)
				}
				msgs, _ := rep.snapshot()
				for _, m := range msgs {
					if m == "unhandled error" {
						s.Unhandled = true
					}
				}
				if diff := cmp.Diff(c.want, s); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
}
