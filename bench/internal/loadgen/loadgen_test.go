package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleep: Sleep ends with nil once d passed, with the failure sent on
// failed, or with ctx's error, whichever comes first.
func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond, nil); err != nil {
		t.Errorf("Sleep with nothing failing = %v, want nil", err)
	}
	failed := make(chan error, 1)
	boom := errors.New("boom")
	failed <- boom
	if err := Sleep(context.Background(), time.Hour, failed); err != boom {
		t.Errorf("Sleep with a failure = %v, want %v", err, boom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with ctx ended = %v, want context.Canceled", err)
	}
}
