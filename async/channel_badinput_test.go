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
