package event

import "errors"

// Source is an event whose notifications carry a result of type T: every
// kind of the module is one (a Timer's T is struct{}, a Signal's the
// signal, an FSEvent's the change, a Listener's the accepted connection, a
// Future[T]'s and a Coroutine[T]'s their T). Its Result method names T:
// it turns the untyped result a CallbackFunc receives into a T, which is
// what On does for its function, so that the compiler knows the type and
// the caller writes no type assertion.
type Source[T any] interface {
	Event
	// Result returns a notification's result as a T. A notification that
	// carries none (an error's, a close's) gives T's zero value.
	Result(result any) T
}

// OnOption changes what On delivers.
type OnOption uint8

// WithClose makes On deliver the notification that the event's Close
// sends (T's zero value and an error matching ErrClosed) too; without it
// that notification is left out, so that a callback's idle or debounce
// logic does not run because the event closed.
const WithClose OnOption = 1

// On subscribes fn to ev and returns the subscription (give it to
// ev.DelCallback to end it). fn runs on the event's loop goroutine with each
// notification's result as a T and its error; the notification a close
// sends (an error matching ErrClosed) is left out unless opts holds
// WithClose.
//
// As with Subscribe, an event that stores its result (a future, a
// coroutine, a process, a lookup, a task...) and has completed already
// replays it to fn at once, on its loop; other closed events refuse with
// ErrClosed. A nil or zero event is refused with ErrNilEvent, a nil fn with
// ErrNilCallback.
//
// For a one-shot event, whose only notification may be the close's (a task
// its reactor's Close takes back), pass WithClose or wait with AwaitValue
// instead, or fn may never run.
func On[T any](ev Source[T], fn func(v T, err error), opts ...OnOption) (*Callback, error) {
	if isNil(ev) {
		return nil, ErrNilEvent
	}
	if fn == nil {
		return nil, ErrNilCallback
	}
	var o OnOption
	for _, x := range opts {
		o |= x
	}
	return Subscribe(ev, func(_ Event, result any, err error) {
		if o&WithClose == 0 && errors.Is(err, ErrClosed) {
			return
		}
		fn(ev.Result(result), err)
	})
}

// OnDone calls fn with the future's value and error when it is done (at
// once, if it is: a done future replays its outcome), on the goroutine
// that owns it (the loop goroutine for a reactor's future), as the other
// kinds' OnDone do. A future closed before it was done is left out unless
// opts holds WithClose. It is On(f, fn, opts...).
func (f *Future[T]) OnDone(fn func(v T, err error), opts ...OnOption) (*Callback, error) {
	return On[T](f, fn, opts...)
}

// Result returns a notification's result as a T (see Source).
func (f *Future[T]) Result(result any) T {
	if _, none := result.(noValue); none {
		v, _, _ := f.Outcome()
		return v
	}
	v, _ := result.(T)
	return v
}
