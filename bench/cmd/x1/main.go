//go:build cgo

// Command x1 is uvevent's side of workload X1 (docs/benchmarks.md): a goroutine
// wakes the reactor's parked loop, the loop resolves a future, the goroutine
// resumes. It prints the mean round trip of the reactor as built (the loop
// goroutine parks in Go and is woken by a channel send) in two forms — Call
// (the goroutine resumes when the loop has resolved the future) and Await
// (the goroutine waits on the future through the waker) — and of driving mode
// (a), kept as a probe: a loop blocking in uv_run on a locked thread, woken by
// uv_async_send.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/uvevent/uvevent/bench/internal/driverflag"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

func main() {
	n := flag.Int("n", 200_000, "round trips")
	driver := driverflag.Var()
	flag.Parse()
	if err := run(*n, *driver); err != nil {
		fmt.Fprintln(os.Stderr, "x1:", err)
		os.Exit(1)
	}
}

func run(n int, driver reactor.Driver) error {
	impl := driverflag.Impl(driver)
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	for !r.Stats().Running {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	for range n {
		f := event.NewFuture[any](r.Owner())
		if err := r.Call(func() { f.Resolve(1) }); err != nil {
			return err
		}
		if _, ok, _ := f.Outcome(); !ok {
			return fmt.Errorf("future not resolved after the round trip")
		}
	}
	rtt := time.Since(start) / time.Duration(n)

	// The same through the waker: the goroutine awaits the future, which
	// the loop resolves on a later operation.
	start = time.Now()
	for range n {
		f := event.NewFuture[any](r.Owner())
		r.Post(func() { r.Post(func() { f.Resolve(1) }) })
		if _, err := event.Await(ctx, event.Any(), f); err != nil {
			return err
		}
	}
	artt := time.Since(start) / time.Duration(n)
	cancel()
	<-done
	if err := r.Close(); err != nil {
		return err
	}
	fmt.Printf("X1 %s rtt_ns=%d rounds=%d\n", impl, rtt.Nanoseconds(), n)
	fmt.Printf("X1 %s-await rtt_ns=%d rounds=%d\n", impl, artt.Nanoseconds(), n)
	if driver == reactor.DriverGo {
		return nil // the probe below is libuv's own driving mode
	}

	p, err := NewProbe()
	if err != nil {
		return err
	}
	m := n / 10
	start = time.Now()
	for range m {
		p.RoundTrip()
	}
	prtt := time.Since(start) / time.Duration(m)
	p.Close()
	fmt.Printf("X1 uvevent-uvrun-blocking rtt_ns=%d rounds=%d\n", prtt.Nanoseconds(), m)
	return nil
}
