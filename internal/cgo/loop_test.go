//go:build cgo

package uvcgo

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// turnUntil turns l until cond holds, failing after many turns.
func turnUntil(t *testing.T, l *Loop, cond func([]Completion) bool) {
	t.Helper()
	for range 1000 {
		done, _ := l.Turn()
		if cond(done) {
			return
		}
	}
	t.Fatal("condition not reached after 1000 turns")
}

func TestLoopLifecycle(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	if fd := l.BackendFD(); fd < 0 {
		t.Fatalf("BackendFD = %d", fd)
	}
	done, timeout := l.Turn()
	if len(done) != 0 || timeout != -1 {
		t.Fatalf("empty loop turn = (%v, %d), want (none, -1)", done, timeout)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestAsyncSendCloseAndFree(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.NewAsync(42)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Handles(); got != 1 {
		t.Fatalf("Handles = %d, want 1", got)
	}
	if err := l.AsyncSend(h); err != nil {
		t.Fatal(err)
	}
	turnUntil(t, l, func(d []Completion) bool {
		return len(d) == 1 && d[0] == Completion{ID: 42, Kind: CompletionAsync}
	})
	if err := l.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("Close with an open handle = %v, want EBUSY", err)
	}
	l.CloseHandle(h)
	turnUntil(t, l, func(d []Completion) bool {
		return len(d) == 1 && d[0] == Completion{ID: 42, Kind: CompletionClosed}
	})
	if got := l.Handles(); got != 0 {
		t.Fatalf("Handles after close = %d, want 0", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestErrorNamesAndErrno(t *testing.T) {
	err := errorOf("uv_timer_start", -int(syscall.EINVAL))
	if got, want := err.Error(), "uv_timer_start: EINVAL (invalid argument)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatal("errors.Is(err, EINVAL) = false")
	}
	if errorOf("x", 0) != nil {
		t.Fatal("code 0 must be no error")
	}
	if v := Version(); v < "1.44" {
		t.Fatalf("libuv %s is older than the pin", v)
	}
}

func newTestLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if l.p == nil {
			return
		}
		l.Shutdown()
		for l.Handles() > 0 || l.Requests() > 0 {
			l.TurnBlocking()
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// Every call that changes libuv's state marks the loop dirty, and a turn
// clears the mark: a kind cannot change what libuv watches behind the
// reactor's back.
func TestDirtyMarksEveryStateChange(t *testing.T) {
	l := newTestLoop(t)
	l.Turn()
	if l.Dirty() {
		t.Fatal("dirty after a turn")
	}
	h, err := l.NewTestTimer(7)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		call func() error
	}{
		{"StartTestTimer", func() error { return l.StartTestTimer(h, 1000, 0) }},
		{"StopTestTimer", func() error { return l.StopTestTimer(h) }},
		{"CloseHandle", func() error { l.CloseHandle(h); return nil }},
	}
	for _, s := range steps {
		l.Turn()
		if err := s.call(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !l.Dirty() {
			t.Errorf("%s did not mark the loop dirty", s.name)
		}
	}
	a, err := l.NewAsync(8)
	if err != nil {
		t.Fatal(err)
	}
	l.Turn()
	if err := l.AsyncSend(a); err != nil || l.Dirty() {
		t.Errorf("AsyncSend = %v, dirty = %v; want nil, false (it is the cross-thread call)", err, l.Dirty())
	}
	l.CloseHandle(a)
}

// A timer started after the loop sat still measures its timeout from the
// start, not from the clock of the last turn.
func TestTimerStartRefreshesTheClock(t *testing.T) {
	l := newTestLoop(t)
	l.Turn()
	before := l.Now()
	time.Sleep(30 * time.Millisecond) // the loop's clock goes stale meanwhile
	h, err := l.NewTestTimer(9)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.StartTestTimer(h, 20, 0); err != nil {
		t.Fatal(err)
	}
	_, timeout := l.Turn()
	if timeout < 15 {
		t.Fatalf("libuv's timeout after a 20 ms start = %d ms: the start used a stale clock (30 ms old)", timeout)
	}
	var fired int64
	for fired == 0 {
		done, _ := l.TurnBlocking()
		for _, c := range done {
			if c.Kind == CompletionTimer {
				fired = c.N
			}
		}
	}
	if fired-int64(before) < 50 {
		t.Fatalf("fired at %d ms after the first clock read, want ≥ 50 (30 ms stale + 20 ms timeout)", fired-int64(before))
	}
	l.CloseHandle(h)
}

// A request in flight counts until its callback ran; a blocking turn after
// Shutdown waits for it rather than spinning, and cancel reports ECANCELED.
func TestRequestsCountedAndAwaited(t *testing.T) {
	l := newTestLoop(t)
	if _, err := l.SubmitTestWork(1, 20000); err != nil {
		t.Fatal(err)
	}
	if got := l.Requests(); got != 1 {
		t.Fatalf("Requests = %d, want 1", got)
	}
	l.Shutdown()
	var got []Completion
	turns := 0
	for l.Requests() > 0 {
		done, _ := l.TurnBlocking()
		got = append(got, done...)
		turns++
	}
	if len(got) != 1 || got[0].ID != 1 || got[0].Kind != CompletionWork || got[0].Status != 0 {
		t.Fatalf("records = %+v, want one work completion for id 1", got)
	}
	if turns > 3 {
		t.Fatalf("%d blocking turns to wait for one request: the wait spins", turns)
	}
}

func TestWorkCancelledBeforeItRuns(t *testing.T) {
	l := newTestLoop(t)
	// Fill libuv's pool (4 threads by default) so the last request waits.
	for i := range 4 {
		if _, err := l.SubmitTestWork(uint64(10+i), 50000); err != nil {
			t.Fatal(err)
		}
	}
	r, err := l.SubmitTestWork(99, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CancelTestWork(r); err != nil {
		t.Fatalf("cancel of a queued request: %v", err)
	}
	var cancelled *Completion
	for l.Requests() > 0 {
		done, _ := l.TurnBlocking()
		for i := range done {
			if done[i].ID == 99 {
				c := done[i]
				cancelled = &c
			}
		}
	}
	if cancelled == nil || !errors.Is(errorOf("", int(cancelled.Status)), syscall.ECANCELED) {
		t.Fatalf("cancelled request's record = %+v, want status ECANCELED", cancelled)
	}
}

// TestWaitReturnsByItsDeadlineWhenDueAtOnce: a Wait returns by its timeout
// even when the timeout is already due as libuv's run begins (0 ms here;
// for a longer one, the thread descheduled between the timer's start and
// the run). libuv runs due timers before it computes the poll's timeout:
// the Wait's own timer, run and gone by then, must not leave the poll
// waiting without one (it waited for good: epoll_wait with -1, until
// something else woke the loop).
func TestWaitReturnsByItsDeadlineWhenDueAtOnce(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	returned := make(chan struct{})
	var stop atomic.Bool
	go func() {
		defer close(returned)
		for i := 0; i < 100 && !stop.Load(); i++ {
			l.Wait(0)
		}
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		stop.Store(true)
		for { // lets the goroutine end before the loop closes
			l.Wake()
			select {
			case <-returned:
				t.Fatal("Wait(0) did not return until woken: the poll had no timeout")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
