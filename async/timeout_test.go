package async_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

func TestTimeoutFiresAsError(t *testing.T) {
	r, rep := newReactor(t)
	to, err := async.NewTimeout(r, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := to.Info(); got != "Timeout(5ms)" {
		t.Errorf("Info = %q", got)
	}
	never := event.NewFuture[int](r)
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) {
		return 0, func() error { _, err := event.Await(ctx, event.Any(), never, to); return err }()
	})
	run(t, r)
	_, err = outcome(t, c)
	var te *event.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, event.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !te.Timeout() {
		t.Fatalf("wait ended with %v, want a TimeoutError", err)
	}
	if err.Error() != "timeout occurred after 5ms" {
		t.Errorf("message %q", err)
	}
	if to.Flags().Has(event.Closed) || event.StateOf(to) != event.Stopped {
		t.Errorf("a fired timeout is %v, want stopped (as the timer it is)", event.StateOf(to))
	}
	// A wait on a fired timeout gets its firing again, as the error it
	// was, at once: no hang, no new timeout.
	outs, err := event.Await(testCtx(t), event.Any(), to)
	if !errors.As(err, &te) || len(outs) != 1 || !errors.As(outs[0].Err, &te) || event.StateOf(to) != event.Stopped {
		t.Errorf("Await on a fired timeout = %+v, %v, %v; want its TimeoutError replayed, still stopped", outs, err, event.StateOf(to))
	}
	if msgs := rep.snapshot(); len(msgs) != 0 {
		t.Errorf("reports %v", msgs)
	}
}

// A timeout that loses the race is stopped by the wait: it does not keep
// the loop alive, and it can be awaited again.
func TestTimeoutStoppedWhenTheWaitEnds(t *testing.T) {
	r, _ := newReactor(t)
	to, _ := async.NewTimeout(r, time.Hour)
	f := event.NewFuture[string](r)
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (string, error) {
		f.Resolve("first")
		outs, err := event.Await(ctx, event.Any(), f, to)
		if err != nil {
			return "", err
		}
		return event.ValueOf[string](outs[0])
	})
	run(t, r) // returns: the hour-long timeout is stopped, nothing is active
	if v, err := outcome(t, c); v != "first" || err != nil {
		t.Fatalf("= %q, %v", v, err)
	}
	if n := eventkind.LoopRefs(to); n != 0 || r.Stats().Active != 0 {
		t.Errorf("after the wait the timeout holds %d Starts, %d active", n, r.Stats().Active)
	}
	to.Close()
	if _, err := event.Await(testCtx(t), event.Any(), to); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Await on a closed timeout = %v, want ErrClosed", err)
	}
}

func TestTimeoutBadInput(t *testing.T) {
	r, _ := newReactor(t)
	for _, d := range []time.Duration{0, -time.Second} {
		if to, err := async.NewTimeout(r, d); to != nil || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("NewTimeout(%v) = %v, %v; want EINVAL", d, to, err)
		}
	}
	if _, err := async.NewTimeout(nil, time.Second); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewTimeout(nil reactor) = %v, want EINVAL", err)
	}
}

func ExampleNewTimeout() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	reply := event.NewFuture[string](r) // nobody answers
	to, _ := async.NewTimeout(r, 50*time.Millisecond)
	c, _ := reactor.Spawn(context.Background(), r, func(ctx context.Context) (string, error) {
		_, err := event.Await(ctx, event.Any(), reply, to)
		return "", err
	})
	r.Run(context.Background())
	_, _, err := c.Outcome()
	fmt.Println(err, errors.Is(err, context.DeadlineExceeded))
	// Output: timeout occurred after 50ms true
}
