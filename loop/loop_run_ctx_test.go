package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run returns its context's error when the context ends first, cancelled
// before the call or by a deadline, while a timer keeps the loop busy.
func TestRunEndsWithItsContext(t *testing.T) {
	for _, end := range []struct {
		name   string
		cancel bool
		want   error
	}{{"cancelled before", true, context.Canceled}, {"short deadline", false, context.DeadlineExceeded}} {
		t.Run(end.name, func(t *testing.T) {
			eachDriver(t, func(t *testing.T, l *tloop) {
				id, err := l.Repeat(time.Hour, func() {})
				if err != nil {
					t.Fatal(err)
				}
				defer l.OffRepeat(id)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				defer cancel()
				if end.cancel {
					cancel()
				}
				if err := l.Run(ctx); !errors.Is(err, end.want) {
					t.Errorf("Run = %v, want an error matching %v", err, end.want)
				}
			})
		})
	}
}
