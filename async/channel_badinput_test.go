package async_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
)

// NewChannel's refusal does not format the reactor (a live struct the loop
// writes: a data race under -race, and its fields dumped into the text).
func TestNewChannelRefusalLeavesReactorAlone(t *testing.T) {
	r, _ := newReactor(t)
	tm, err := r.NewTimer(time.Millisecond, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	for range 100 {
		_, err := async.NewChannel[int](r, -1)
		if !errors.Is(err, syscall.EINVAL) || strings.Contains(err.Error(), "{") {
			t.Fatalf("NewChannel(r, -1) = %v, want EINVAL without the reactor's fields", err)
		}
	}
	cancel()
	<-done
	tm.Close()
}

// NewChannel refuses a capacity whose buffer no allocation could hold, as
// make(chan T, n) would panic for it, with EINVAL; a type of size zero
// holds any capacity.
func TestNewChannelHugeCapacityRefused(t *testing.T) {
	r, _ := newReactor(t)
	if _, err := async.NewChannel[int](r, 1<<62); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewChannel[int](r, 1<<62) = %v, want EINVAL", err)
	}
	if _, err := async.NewChannel[[1 << 20]byte](r, 1<<40); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewChannel[[1<<20]byte](r, 1<<40) = %v, want EINVAL", err)
	}
	if _, err := async.NewChannel[struct{}](r, 1<<62); err != nil {
		t.Errorf("NewChannel[struct{}](r, 1<<62) = %v, want a channel", err)
	}
	if _, err := async.NewChannel[int](r, 1<<20); err != nil {
		t.Errorf("NewChannel[int](r, 1<<20) = %v, want a channel", err)
	}
}
