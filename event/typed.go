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
	if _, none := result.(noValue); none { // a future or a handoff that left its value unboxed
		// The handoff found through the event's Base, as awaitOne found
		// it, so that a type embedding a *Handoff[T] reads its value too;
		// a type check on the ops, not an interface's lookup.
		if h, ok := ev.base().ops.(*handoffOps[T]); ok {
			return (*Handoff[T])(h).claimed(), nil // the handoff's value is this wait's: taken even as the wait ends
		}
		if err == nil {
			v, _, _ := ev.Outcome()
			return v, nil
		}
	}
	if err != nil {
		return zero, err
	}
	v, _ := result.(T)
	return v, nil
}

// AwaitAll waits for every event and returns their values in the order of
// the events. The first error ends the wait: it is returned with the values
// known by then (the others are T's zero value).
//
// The events may be of one type, passed as a slice of it
// (AwaitAll(ctx, tasks...) with tasks a []*uv.Task[int]), or of several
// kinds with one T, passed as a []Typed[T] or with the type arguments
// given (AwaitAll[int, Typed[int]](ctx, future, coroutine)).
func AwaitAll[T any, E Typed[T]](ctx context.Context, evs ...E) ([]T, error) {
	outs, err := Await(ctx, All(), events(evs)...)
	if outs == nil {
		return nil, err
	}
	return values[T](outs), err
}

// AwaitAllSettled waits for every event to notify, success or error, and
// returns their values and errors by position: vs[i] and errs[i] are the
// i-th event's (T's zero value with its error). err is not an event's: it
// is nil once every event has notified, else why the wait ended first (ctx
// ended, ErrDeadlock). Then each event that had not notified has T's zero
// value and that same error in errs[i] (errors.Is matches
// context.DeadlineExceeded, say): no position reads as an empty success.
// The events are passed as for AwaitAll.
func AwaitAllSettled[T any, E Typed[T]](ctx context.Context, evs ...E) (vs []T, errs []error, err error) {
	outs, err := Await(ctx, All().IgnoreErrors(), events(evs)...)
	if outs == nil {
		return nil, nil, err
	}
	errs = make([]error, len(outs))
	for i, o := range outs {
		errs[i] = o.Err
		if !o.Done {
			errs[i] = err
		}
	}
	return values[T](outs), errs, err
}

// AwaitFirst waits for the first event to succeed and returns its position
// and value. When every event fails, winner is -1 and err joins their
// errors; when ctx ends or the wait is aborted first, winner is -1 and err
// says why. The events are passed as for AwaitAll.
func AwaitFirst[T any, E Typed[T]](ctx context.Context, evs ...E) (winner int, v T, err error) {
	outs, err := Await(ctx, FirstSuccess(), events(evs)...)
	if err != nil {
		return -1, v, err
	}
	for i, o := range outs {
		if o.Done && o.Err == nil {
			return i, valueOf(evs[i], o), nil
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

// values gives each outcome's result as a T, by position.
func values[T any](outs []Outcome) []T {
	vs := make([]T, len(outs))
	for i, o := range outs {
		vs[i], _ = ValueOf[T](o)
	}
	return vs
}

// valueOf is an outcome's value as ev gives it: a future that left its
// value unboxed gives it through Outcome.
func valueOf[T any](ev Typed[T], o Outcome) T {
	if _, none := o.Result.(noValue); none {
		v, _, _ := ev.Outcome()
		return v
	}
	v, _ := o.Result.(T)
	return v
}

// events is the list Await takes: the wait keeps its own, so the caller's
// slice is neither copied into a []Typed[T] nor kept.
func events[T any, E Typed[T]](evs []E) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = ev
	}
	return out
}
