package reactor

import (
	"context"
	"testing"

	"github.com/uvevent/uvevent/internal/waiting"
)

// armer arms a park: it keeps the coroutine's resume function in *slot.
type armer struct{ slot *func() }

func (a armer) Arm(resume func()) { *a.slot = resume }

// BenchmarkK1Baton is K1 without package event: two cooperative
// coroutines that make each other ready (schedule) and park (Park), so
// that a round trip is two switches of the baton and nothing else: no
// future, no Await, no Resolve. It is the floor of
// BenchmarkK1CoroutineSwitch, to read beside BenchmarkK1ChanPingPong.
func BenchmarkK1Baton(b *testing.B) {
	r, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	n := b.N
	var wake [2]func() // loop-owned: the other one's resume, once armed
	done := false      // loop-owned
	body := func(me int) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			w := (*coopWaiter)(nil)
			for i := 0; ; i++ {
				if me == 0 && i == n {
					done = true
				}
				if f := wake[1-me]; f != nil {
					wake[1-me] = nil
					f()
				}
				if done {
					return i, nil
				}
				if w == nil {
					w = ctxWaiter(ctx)
				}
				w.Park(armer{&wake[me]})
			}
		}
	}
	for me := range 2 {
		if _, err := Spawn(ctx, r, body(me)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	if err := r.Run(ctx); err != nil {
		b.Fatal(err)
	}
}

// ctxWaiter is the cooperative coroutine's waiter its context carries.
func ctxWaiter(ctx context.Context) *coopWaiter {
	w, _ := waiting.From(ctx).(*coopWaiter)
	return w
}
