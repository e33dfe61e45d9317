//go:build cgo

package main

import "testing"

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
