package async_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func TestChannelUnbufferedAndBuffered(t *testing.T) {
	for _, capacity := range []int{0, 1, 3} {
		t.Run(fmt.Sprint("cap ", capacity), func(t *testing.T) {
			r, rep := newReactor(t)
			ch, _ := async.NewChannel[int](r, capacity)
			ctx := testCtx(t)
			var got []int
			recv, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
				for {
					v, err := ch.Recv().Await(ctx)
					if errors.Is(err, async.ErrChannelClosed) {
						return len(got), nil
					}
					if err != nil {
						return 0, err
					}
					got = append(got, v)
				}
			})
			send, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
				for i := range 10 {
					if _, err := ch.Send(i).Await(ctx); err != nil {
						return i, err
					}
				}
				return 10, ch.Close()
			})
			run(t, r)
			if n, err := outcome(t, send); n != 10 || err != nil {
				t.Fatalf("sender = %d, %v", n, err)
			}
			if n, err := outcome(t, recv); n != 10 || err != nil {
				t.Fatalf("receiver = %d, %v", n, err)
			}
			if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got); diff != "" {
				t.Errorf("received (-want +got):\n%s", diff)
			}
			if msgs := rep.snapshot(); len(msgs) != 0 {
				t.Errorf("reports %v", msgs)
			}
		})
	}
}

// Close: a buffered value is still received, then ErrChannelClosed; a send
// on a closed channel fails; closing twice does nothing.
func TestChannelClose(t *testing.T) {
	r, _ := newReactor(t)
	ch, _ := async.NewChannel[string](r, 2)
	ctx := testCtx(t)
	if v, err := ch.Send("kept").Await(ctx); v != "kept" || err != nil {
		t.Fatalf("buffered send = %q, %v", v, err)
	}
	if n := ch.Len(); n != 1 {
		t.Fatalf("Len = %d", n)
	}
	ch.Close()
	ch.Close()
	if v, err := ch.Recv().Await(ctx); v != "kept" || err != nil {
		t.Errorf("receive after Close = %q, %v; want the buffered value", v, err)
	}
	if _, err := ch.Recv().Await(ctx); !errors.Is(err, async.ErrChannelClosed) {
		t.Errorf("receive from a drained closed channel = %v", err)
	}
	if _, err := ch.Send("late").Await(ctx); !errors.Is(err, async.ErrChannelClosed) {
		t.Errorf("send on a closed channel = %v", err)
	}
	if _, err := async.NewChannel[int](r, -1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewChannel(-1) = %v", err)
	}
}

// A receive that loses a race in one wait is taken out of line: the value
// sent later goes to the next receive, not to the abandoned one.
func TestChannelAbandonedReceiveTakesNothing(t *testing.T) {
	r, _ := newReactor(t)
	ch, _ := async.NewChannel[int](r, 0)
	ctx := testCtx(t)
	c, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
		lost := ch.Recv()
		now := event.NewFuture[int](r)
		now.Resolve(0)
		if _, err := event.Await(ctx, event.Any(), lost, now); err != nil {
			return 0, err
		}
		if _, ok, _ := lost.Outcome(); ok {
			return 0, errors.New("the abandoned receive completed")
		}
		return ch.Recv().Await(ctx)
	})
	s, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return ch.Send(42).Await(ctx) })
	run(t, r)
	if v, err := outcome(t, c); v != 42 || err != nil {
		t.Fatalf("receiver = %d, %v; want 42", v, err)
	}
	if _, err := outcome(t, s); err != nil {
		t.Fatal(err)
	}
}

// A receive nobody will ever send to is a deadlock, and the report says
// where the coroutine waits and on what.
func TestChannelReceiveNobodySendsToIsADeadlock(t *testing.T) {
	r, rep := newReactor(t)
	ch, _ := async.NewChannel[int](r, 0)
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) { return ch.Recv().Await(ctx) })
	run(t, r)
	_, err := outcome(t, c)
	dl := deadlockReport(t, err)
	if len(dl.Waiters) != 1 || !strings.HasPrefix(dl.Waiters[0].Where, "async/channel_test.go:") ||
		!cmp.Equal(dl.Waiters[0].Events, []string{"Channel.Recv(cap=0, buffered=0, senders=0, receivers=1)"}) {
		t.Errorf("report = %+v", dl.Waiters)
	}
	if diff := cmp.Diff([]string{"deadlock"}, rep.snapshot()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// No false alarm: a receive that a timer's callback will answer waits.
func TestChannelReceiveAnsweredByTimerIsNoDeadlock(t *testing.T) {
	r, rep := newReactor(t)
	ch, _ := async.NewChannel[int](r, 0)
	tm, _ := r.NewTimer(5*time.Millisecond, 0)
	event.Subscribe(tm, func(event.Event, any, error) { ch.Send(7).Start() })
	tm.Start()
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) { return ch.Recv().Await(ctx) })
	run(t, r)
	if v, err := outcome(t, c); v != 7 || err != nil {
		t.Fatalf("= %d, %v", v, err)
	}
	if msgs := rep.snapshot(); len(msgs) != 0 {
		t.Errorf("reports %v", msgs)
	}
}

// Parallel goroutines send while cooperative coroutines receive.
func TestChannelManySendersAndReceivers(t *testing.T) {
	r, _ := newReactor(t)
	ch, _ := async.NewChannel[int](r, 4)
	ctx := testCtx(t)
	const senders, each = 8, 50
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		reactor.Go(ctx, r, func(ctx context.Context) (int, error) {
			defer wg.Done()
			for i := range each {
				if _, err := ch.Send(s*each + i).Await(ctx); err != nil {
					return 0, err
				}
			}
			return 0, nil
		})
	}
	closer, _ := reactor.Go(ctx, r, func(ctx context.Context) (int, error) { wg.Wait(); return 0, ch.Close() })
	sum := 0
	var recvs []*reactor.Coroutine[int]
	for range 4 {
		c, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			n := 0
			for {
				v, err := ch.Recv().Await(ctx)
				if errors.Is(err, async.ErrChannelClosed) {
					return n, nil
				} else if err != nil {
					return n, err
				}
				sum += v // cooperative: no lock
				n++
			}
		})
		recvs = append(recvs, c)
	}
	release, _ := r.Hold() // the closer waits on a WaitGroup the reactor cannot see
	go func() { wg.Wait(); closer.Await(ctx); release() }()
	run(t, r)
	n := 0
	for _, c := range recvs {
		k, err := outcome(t, c)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	if want := senders * each; n != want || sum != want*(want-1)/2 {
		t.Errorf("received %d values summing to %d, want %d summing to %d", n, sum, want, want*(want-1)/2)
	}
}

func ExampleChannel() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	ctx := context.Background()
	ch, _ := async.NewChannel[string](r, 0)
	reactor.Spawn(ctx, r, func(ctx context.Context) (struct{}, error) {
		for _, w := range []string{"ping", "pong"} {
			ch.Send(w).Await(ctx)
		}
		return struct{}{}, ch.Close()
	})
	got, _ := reactor.Spawn(ctx, r, func(ctx context.Context) ([]string, error) {
		var words []string
		for {
			w, err := ch.Recv().Await(ctx)
			if errors.Is(err, async.ErrChannelClosed) {
				return words, nil
			}
			words = append(words, w)
		}
	})
	r.Run(ctx)
	fmt.Println(got.Outcome())
	// Output: [ping pong] true <nil>
}
