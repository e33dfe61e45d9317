package loop_test

import (
	"context"
	"math"
	"testing"
	"time"
)

// Delay and Repeat of about 292 years never fire: timeouts just under the
// largest Duration, half a millisecond apart over a second, put one
// deadline within the last millisecond of the clock's range whatever the
// loop's age, where rounding it up used to wrap negative.
func TestDelayRepeatNearMaxDurationNeverFire(t *testing.T) {
	eachDriver(t, func(t *testing.T, l *tloop) {
		fired := 0
		for x := time.Duration(0); x < time.Second; x += 500 * time.Microsecond {
			_, err := l.Delay(math.MaxInt64-x, func() { fired++ })
			must(t, err)
			_, err = l.Repeat(math.MaxInt64-x, func() { fired++ })
			must(t, err)
		}
		for range 3 {
			must(t, l.Reactor().RunNoWait(context.Background()))
		}
		if fired != 0 {
			t.Errorf("%d timers of about 292 years fired at once", fired)
		}
		l.DeleteAllTimers()
	})
}
