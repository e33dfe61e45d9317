package reactor

import "github.com/uvevent/uvevent/event"

// Result returns struct{}: a timer's notifications carry no result (see
// event.Source).
func (t *Timer) Result(any) struct{} { return struct{}{} }

// OnFire calls fn on the loop goroutine each time the timer fires (it must
// be started), with the error the notification carries: nil for a plain
// timer (a timer used as a timeout, async.Timeout, fires with its timeout
// error). The notification the timer's Close sends is left out unless opts
// holds event.WithClose.
func (t *Timer) OnFire(fn func(err error), opts ...event.OnOption) (*event.Callback, error) {
	var f func(struct{}, error)
	if fn != nil {
		f = func(_ struct{}, err error) { fn(err) }
	}
	return event.On(t, f, opts...)
}

// Result returns a notification's result as the coroutine's T (see
// event.Source).
func (c *Coroutine[T]) Result(result any) T {
	if c == nil || c.f == nil {
		v, _ := result.(T)
		return v
	}
	return c.f.Result(result)
}

// OnDone calls fn on the loop goroutine with the coroutine's result and
// error when its function returns (at once, on the loop, if it has). See
// event.On for what a close does.
func (c *Coroutine[T]) OnDone(fn func(v T, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(c, fn, opts...)
}
