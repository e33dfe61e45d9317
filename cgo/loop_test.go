package uvcgo

import (
	"errors"
	"syscall"
	"testing"
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

func TestProbeRoundTrip(t *testing.T) {
	p, err := NewProbe()
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		p.RoundTrip()
	}
	p.Close()
	if n := probePanics.Load(); n != 0 {
		t.Fatalf("%d panics in the probe callback", n)
	}
}

// BenchmarkX1Blocking measures driving mode (a): uv_run blocks on a locked
// thread; a goroutine wakes it with uv_async_send and waits for the answer.
func BenchmarkX1Blocking(b *testing.B) {
	p, err := NewProbe()
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		p.RoundTrip()
	}
}
