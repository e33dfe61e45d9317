package reactor_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// Workload X1 (docs/benchmarks.md): cross-goroutine wake-ups of a serving reactor.
// The raw C comparator (bench/c/x1_async.c) and the Go channel ping-pong
// (bench/cmd/x1chan) run beside these in `make bench`; uvcgo's
// BenchmarkX1Blocking measures the other way of driving the loop.

func serving(b *testing.B) (*reactor.Reactor, func()) {
	b.Helper()
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Serve(ctx)
		close(done)
	}()
	for !r.Stats().Running {
		time.Sleep(time.Millisecond)
	}
	return r, func() {
		cancel()
		<-done
		r.Close()
	}
}

// BenchmarkX1RoundTrip: a goroutine wakes the parked loop, the loop resolves
// a future, the goroutine resumes and reads it.
func BenchmarkX1RoundTrip(b *testing.B) {
	r, stop := serving(b)
	defer stop()
	b.ReportAllocs()
	for b.Loop() {
		f := event.NewFuture[any](r)
		r.Call(func() { f.Resolve(1) })
		if _, ok, _ := f.Outcome(); !ok {
			b.Fatal("future not resolved after the round trip")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "rtt_ns")
}

// BenchmarkX1Await: the same through the waker: the goroutine subscribes with
// event.Await, the loop resolves, the waker resumes the goroutine.
func BenchmarkX1Await(b *testing.B) {
	r, stop := serving(b)
	defer stop()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f := event.NewFuture[any](r)
		r.Post(func() { r.Post(func() { f.Resolve(1) }) })
		if _, err := event.Await(ctx, event.Any(), f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "rtt_ns")
}

// BenchmarkX1Senders: 8 goroutines post operations as fast as they can; the
// loop must keep up, with wake-ups coalescing (wakeups/op well below 1).
func BenchmarkX1Senders(b *testing.B) {
	r, stop := serving(b)
	defer stop()
	const senders = 8
	before := r.Stats()
	var wg sync.WaitGroup
	per := b.N/senders + 1
	b.ResetTimer()
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				r.Post(func() {})
			}
		}()
	}
	wg.Wait()
	r.Call(func() {}) // the loop has run everything posted
	b.StopTimer()
	after := r.Stats()
	ops := float64(per * senders)
	b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(after.Wakeups-before.Wakeups)/ops, "wakeups/op")
}

// BenchmarkX1Idle: the process's CPU time per second of doing nothing, in
// windows of 200 ms taken in turn without a reactor (baseline: the Go
// runtime's own background work, the benchmark's goroutine asleep) and with
// a serving, idle reactor (target: the baseline). The rounds alternate, so
// that what the machine's load does to one does it to the other; each
// window starts after a collection and a pause, so that neither pays for
// the collection of what setting up a reactor allocated; the medians of
// the rounds are reported. The serving window opens some 50 ms after Serve
// began and serving's Stats call woke the loop: it also counts what a start
// and a lone call leave behind (the watchdog's look a quarter of
// BlockedAfter later was one such, TestLoneCallCostsTheWatchdogNoLook).
func BenchmarkX1Idle(b *testing.B) {
	const rounds, window, settle = 5, 200 * time.Millisecond, 50 * time.Millisecond
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	measure := func() float64 {
		runtime.GC()
		time.Sleep(settle)
		before := cpu()
		time.Sleep(window)
		return float64(cpu()-before) / 1e3 / window.Seconds()
	}
	var base, serve []float64
	for b.Loop() {
		for range rounds {
			base = append(base, measure())
			_, stop := serving(b)
			serve = append(serve, measure())
			stop()
		}
	}
	b.ReportMetric(median(base), "baseline_cpu_us/s")
	b.ReportMetric(median(serve), "serving_cpu_us/s")
}

// median is the middle value of xs (the mean of the middle two when even).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
