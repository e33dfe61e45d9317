package event

import (
	"errors"
	"io"
	"reflect"
	"unsafe"
	"weak"
)

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
// Over an event reference (a Listener, an IO...), On does not keep the
// reference from being collected. A result that comes once it has been
// (the event behind it started again before the reference's cleanup
// closed it) is not given to fn, as there is nothing left to read it as a
// T; one that is an io.Closer (an accepted connection), which the callback
// would have owned, is closed.
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
	result := resultOf(ev)
	return Subscribe(ev, func(e Event, r any, err error) {
		if o&WithClose == 0 && errors.Is(err, ErrClosed) {
			return
		}
		v, ok := result(e, r)
		if !ok {
			unclaimed(r)
			return
		}
		fn(v, err)
	})
}

// unclaimed disposes of a result that no On callback can read: one that is
// an io.Closer (an accepted connection, a received handle) is owned by the
// callback it goes to, and with none to take it, it is closed, so that its
// descriptor does not leak.
func unclaimed(r any) {
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}

// resultOf returns how On's callback turns a notification of ev into a T
// without holding ev: a callback that held its event would keep it, and its
// reactor, from being collected once dropped (a stopped listener whose
// reference holds the callback that holds the reference). ok is false for a
// result that cannot be read as a T any more: On's callback then leaves fn
// out and disposes of the result (unclaimed).
//
// Notifications name the event that their Base's Ops gives. When that is
// ev itself (a future, a coroutine, a task...), the notification's event is
// ev. When it is another one (an event reference, such as a Listener, whose
// notifications name the driver's event behind it), ev is held weakly: its
// event holds it while it is active, and once it is collected its cleanup
// closes the event, whose remaining notification (the close's) carries no
// result. A result that comes in between (the event was started again, by
// whoever held it, before that close ran) has no ev to read it: it is not
// delivered.
func resultOf[T any](ev Source[T]) func(e Event, r any) (T, bool) {
	if n := ev.base().ops.Event(); sameEvent(n, ev) {
		return func(e Event, r any) (T, bool) { return e.(Source[T]).Result(r), true }
	}
	rv := reflect.ValueOf(ev)
	if rv.Kind() != reflect.Pointer || rv.Type().Elem().Size() == 0 {
		return func(_ Event, r any) (T, bool) { return ev.Result(r), true }
	}
	typ := rv.Type().Elem()
	w := weak.Make((*byte)(rv.UnsafePointer()))
	return func(_ Event, r any) (T, bool) {
		var zero T
		p := w.Value()
		if p == nil {
			return zero, r == nil
		}
		return reflect.NewAt(typ, unsafe.Pointer(p)).Interface().(Source[T]).Result(r), true
	}
}

// sameEvent reports whether a and b are one event (comparable events only:
// a kind that is not a pointer is never the same as another value).
func sameEvent(a, b Event) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta != nil && ta.Comparable() && a == b
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
