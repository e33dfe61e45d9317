package event

import (
	"context"
	"errors"
)

// Typed is an event whose result is a T: a *Future[T], a reactor's
// *Coroutine[T], the receive of a typed channel (package async). The typed
// waits below take such events and give back values of T, by position.
type Typed[T any] interface {
	Event
	// Outcome returns the stored value and error once there is one; ok is
	// false before.
	Outcome() (v T, ok bool, err error)
}

// AwaitValue waits for one typed event and returns its value and error.
func AwaitValue[T any](ctx context.Context, ev Typed[T]) (T, error) {
	if isNil(ev) {
		var zero T
		return zero, ErrNilEvent
	}
	return awaitValue(ctx, ev)
}

// awaitValue is AwaitValue on an event known not to be nil.
func awaitValue[T any](ctx context.Context, ev Typed[T]) (T, error) {
	var zero T
	if ctx == nil {
		return zero, errNilContext
	}
	result, _, err, ok := awaitOne(ctx, ev, true)
	if !ok {
		var outs []Outcome
		outs, err = await(ctx, Any(), []Event{ev})
		if outs != nil {
			result = outs[0].Result
		}
	}
	if err != nil {
		return zero, err
	}
	if _, none := result.(noValue); none { // a future that left its value unboxed
		v, _, _ := ev.Outcome()
		return v, nil
	}
	v, _ := result.(T)
	return v, nil
}

// AwaitAll waits for every event and returns their values in the order of
// the events. The first error ends the wait: it is returned with the values
// known by then (the others are T's zero value).
func AwaitAll[T any](ctx context.Context, evs ...Typed[T]) ([]T, error) {
	outs, err := Await(ctx, All(), events(evs)...)
	if outs == nil {
		return nil, err
	}
	vs := make([]T, len(outs))
	for i, o := range outs {
		vs[i], _ = ValueOf[T](o)
	}
	return vs, err
}

// AwaitFirst waits for the first event to succeed and returns its position
// and value. When every event fails, winner is -1 and err joins their
// errors; when ctx ends or the wait is aborted first, winner is -1 and err
// says why.
func AwaitFirst[T any](ctx context.Context, evs ...Typed[T]) (winner int, v T, err error) {
	outs, err := Await(ctx, FirstSuccess(), events(evs)...)
	if err != nil {
		return -1, v, err
	}
	for i, o := range outs {
		if o.Done && o.Err == nil {
			v, _ = ValueOf[T](o)
			return i, v, nil
		}
	}
	return -1, v, errors.New("event: AwaitFirst ended without a winner")
}

// Winner returns the outcome that won a wait in mode Any or FirstSuccess:
// the one that notified without error (the first by position, should there
// be several). ok is false when none did.
func Winner(outs []Outcome) (o Outcome, ok bool) {
	for _, o := range outs {
		if o.Done && o.Err == nil {
			return o, true
		}
	}
	return Outcome{}, false
}

// ValueOf returns an outcome's result as a T, and its error. A result that
// is not a T (nil, or an outcome that is not Done) gives T's zero value.
func ValueOf[T any](o Outcome) (T, error) {
	v, _ := o.Result.(T)
	return v, o.Err
}

func events[T any](evs []Typed[T]) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = ev
	}
	return out
}
