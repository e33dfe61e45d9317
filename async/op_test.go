package async_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// An Op's lifecycle: created; started, it waits in line (hidden: not
// active); stopped, it leaves the line; started again, it completes when a
// value comes, closes, and replays to late subscribers.
func TestOpLifecycle(t *testing.T) {
	r, _ := newReactor(t)
	ch, _ := async.NewChannel[string](r, 0)
	recv := ch.Recv()
	type seen struct {
		State  string
		Line   string
		Active int
	}
	look := func() seen {
		return seen{event.StateOf(recv).String(), recv.Info(), r.Stats().Active}
	}
	var got []seen
	got = append(got, look())
	recv.Start()
	got = append(got, look())
	recv.Stop()
	got = append(got, look())
	var notified []any
	event.Subscribe(recv, func(_ event.Event, v any, err error) { notified = append(notified, v, err) })
	recv.Start()
	if _, err := ch.Send("hello").Await(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	got = append(got, look())
	want := []seen{
		{"created", "Channel.Recv(cap=0, buffered=0, senders=0, receivers=0)", 0},
		{"active", "Channel.Recv(cap=0, buffered=0, senders=0, receivers=1)", 0},
		{"stopped", "Channel.Recv(cap=0, buffered=0, senders=0, receivers=0)", 0},
		{"closed", "Channel.Recv(cap=0, buffered=0, senders=0, receivers=0)", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lifecycle (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"hello", nil}, notified); diff != "" {
		t.Errorf("subscriber got (-want +got):\n%s", diff)
	}
	if f := recv.Flags(); !f.Has(event.Closed | event.GoOwned | event.Hidden | event.ResultUsed) {
		t.Errorf("flags %v", f)
	}
	// Replay and a late Await give the stored value; Start is refused.
	var replayed any
	recv.Replay(event.NewCallback(func(_ event.Event, v any, _ error) { replayed = v }))
	if v, err := recv.Await(testCtx(t)); v != "hello" || err != nil || replayed != "hello" {
		t.Errorf("late Await = %q, %v; replay %v", v, err, replayed)
	}
	if err := recv.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after completion = %v", err)
	}
	recv.Dispose()
	recv.Dispose()
}

// A wait on an Op that its context cancels takes the Op out of line.
func TestOpCancelledByContext(t *testing.T) {
	r, _ := newReactor(t)
	ch, _ := async.NewChannel[int](r, 0)
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	recv := ch.Recv()
	if _, err := recv.Await(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Await with a cancelled context = %v", err)
	}
	if got := recv.Info(); got != "Channel.Recv(cap=0, buffered=0, senders=0, receivers=0)" {
		t.Errorf("after the cancelled wait: %s", got)
	}
	// The value goes to the next receiver, not to the abandoned one.
	send := ch.Send(5)
	send.Start()
	if v, err := ch.Recv().Await(testCtx(t)); v != 5 || err != nil {
		t.Errorf("next receive = %d, %v", v, err)
	}
	if _, ok, _ := recv.Outcome(); ok {
		t.Error("the abandoned receive completed")
	}
}

// A receive and a timeout in one wait: whichever comes first wins, and a
// receive that loses takes nothing.
func ExampleOp() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	ch, _ := async.NewChannel[string](r, 0)
	c, _ := reactor.Spawn(context.Background(), r, func(ctx context.Context) (string, error) {
		to, _ := async.NewTimeout(r, 20*time.Millisecond)
		outs, err := event.Await(ctx, event.Any(), ch.Recv(), to)
		if err != nil {
			return "", err // nobody sent: timeout occurred after 20ms
		}
		return event.ValueOf[string](outs[0])
	})
	r.Run(context.Background())
	_, _, err := c.Outcome()
	fmt.Println(err)
	// Output: timeout occurred after 20ms
}
