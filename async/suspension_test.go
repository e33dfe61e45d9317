package async_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A coroutine suspends; timer callbacks resume it with values, then throw.
func TestSuspensionResumeAndThrow(t *testing.T) {
	r, rep := newReactor(t)
	s, _ := async.NewSuspension[int](r)
	boom := errors.New("boom")
	tick, _ := r.NewTimer(time.Millisecond, time.Millisecond)
	n := 0
	event.Subscribe(tick, func(ev event.Event, _ any, _ error) {
		n++
		if n < 3 {
			s.Resume(n * 10)
		} else {
			s.Throw(boom)
			ev.Close()
		}
	})
	tick.Start()
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) ([]int, error) {
		var got []int
		for {
			v, err := s.Suspend(ctx)
			if err != nil {
				return got, err
			}
			got = append(got, v)
		}
	})
	run(t, r)
	if _, err := outcome(t, c); !errors.Is(err, boom) {
		t.Fatalf("coroutine ended with %v, want the thrown error", err)
	}
	if msgs := rep.snapshot(); len(msgs) != 0 {
		t.Errorf("reports %v", msgs)
	}
}

// A Resume before the Suspend is kept; a second one is refused.
func TestSuspensionResumeFirst(t *testing.T) {
	r, _ := newReactor(t)
	s, _ := async.NewSuspension[string](r)
	if err := s.Resume("early"); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume("twice"); !errors.Is(err, event.ErrCompleted) {
		t.Errorf("second Resume = %v, want ErrCompleted", err)
	}
	got := []string{}
	for range 2 {
		v, _ := s.Suspend(testCtx(t))
		got = append(got, v)
		s.Resume("again")
	}
	if diff := cmp.Diff([]string{"early", "again"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := async.NewSuspension[int](nil); err == nil {
		t.Error("NewSuspension(nil) accepted")
	}
}

// Suspended with nothing left to resume it: a deadlock, reported.
func TestSuspensionNobodyResumesIsADeadlock(t *testing.T) {
	r, _ := newReactor(t)
	s, _ := async.NewSuspension[int](r)
	c, _ := reactor.Spawn(testCtx(t), r, func(ctx context.Context) (int, error) { return s.Suspend(ctx) })
	run(t, r)
	_, err := outcome(t, c)
	dl := deadlockReport(t, err)
	if w := dl.Waiters[0]; !strings.HasPrefix(w.Where, "async/suspension_test.go:") || w.Events[0] != "Future(pending)" {
		t.Errorf("report = %+v", dl.Waiters)
	}
}

func ExampleSuspension() {
	r, _ := reactor.New(reactor.Options{})
	defer r.Close()
	s, _ := async.NewSuspension[string](r)
	tm, _ := r.NewTimer(10*time.Millisecond, 0)
	event.Subscribe(tm, func(event.Event, any, error) { s.Resume("woken by a timer") })
	tm.Start()
	c, _ := reactor.Spawn(context.Background(), r, func(ctx context.Context) (string, error) {
		return s.Suspend(ctx)
	})
	r.Run(context.Background())
	fmt.Println(c.Outcome())
	// Output: woken by a timer true <nil>
}
