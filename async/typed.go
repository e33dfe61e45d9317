package async

import "github.com/uvevent/uvevent/event"

// Result returns a notification's result as the Op's T: the value
// received, sent or acquired (see event.Source).
func (op *Op[T]) Result(result any) T {
	v, _ := result.(T)
	return v
}

// OnDone calls fn on the loop goroutine with the Op's value and error when
// it completes (at once, on the loop, if it has). The Op must be started
// (event.Await starts the events it waits on; a callback's Op is started
// with Start). The notification a Close sends is left out unless opts holds
// event.WithClose.
func (op *Op[T]) OnDone(fn func(v T, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(op, fn, opts...)
}
