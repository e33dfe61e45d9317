package uv

import (
	"context"
	"net/netip"
	"syscall"

	"github.com/uvevent/uvevent/event"
)

// This file makes every kind of the package an event.Source of its result
// type (its Result method), every kind that stores a result an
// event.Typed (its Outcome method), and gives the kinds whose callbacks are
// written most a typed way to subscribe (OnAccept, OnRead, OnChange, ...).
// Each On method is event.On on the kind: the notification a close sends
// is left out unless event.WithClose is given.

// as returns result as a T, or T's zero value.
func as[T any](result any) T {
	v, _ := result.(T)
	return v
}

// typedOutcome reads a Go-owned kind's stored outcome as a T; the outcome
// is written once, before done is set, so it is read without the loop.
func typedOutcome[T any](o *outcome, zero bool, typ string) (v T, ok bool, err error) {
	if zero {
		return v, false, errZero(typ)
	}
	res, err, ok := o.stored()
	return as[T](res), ok, err
}

// replayedOutcome reads a request kind's stored outcome through Replay, on
// its loop: ok is false while the request is in flight, and once its
// reactor has closed.
func replayedOutcome[T any](ev event.Event, zero bool, typ string) (v T, ok bool, err error) {
	if zero {
		return v, false, errZero(typ)
	}
	cb := event.NewCallback(func(_ event.Event, res any, rerr error) {
		v, ok, err = as[T](res), true, rerr
	})
	defer cb.Release()
	if ev.Replay(cb) != nil {
		var zero T
		return zero, false, nil
	}
	return v, ok, err
}

// Result returns a notification's result as the task's T (see event.Source).
func (t *Task[T]) Result(result any) T { return as[T](result) }

// Outcome returns the function's result and error once the task has
// completed; ok is false before (see event.Typed).
func (t *Task[T]) Outcome() (v T, ok bool, err error) {
	return typedOutcome[T](t.outcome(), t == nil || t.r == nil, "Task")
}

// Await waits for the task's result and error (at once when it has
// completed). When ctx ends first it returns ctx's error and the task goes
// on. It must not be called on the loop goroutine (event.ErrOnLoop):
// subscribe there instead (OnDone).
func (t *Task[T]) Await(ctx context.Context) (T, error) { return event.AwaitValue[T](ctx, t) }

// OnDone calls fn on the loop goroutine with the task's result and error
// when it completes (at once, on the loop, if it has). A task taken back by
// a Close is left out unless opts holds event.WithClose.
func (t *Task[T]) OnDone(fn func(v T, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(t, fn, opts...)
}

// Result returns a notification's result as the thread's T (see
// event.Source).
func (t *Thread[T]) Result(result any) T { return as[T](result) }

// Outcome returns the function's result and error once the thread has
// ended; ok is false before (see event.Typed).
func (t *Thread[T]) Outcome() (v T, ok bool, err error) {
	return typedOutcome[T](t.outcome(), t == nil || t.r == nil, "Thread")
}

// Await waits for the function's result and error. See Task.Await.
func (t *Thread[T]) Await(ctx context.Context) (T, error) { return event.AwaitValue[T](ctx, t) }

// OnDone calls fn on the loop goroutine with the function's result and
// error when it returns (at once, on the loop, if it has). See Task.OnDone.
func (t *Thread[T]) OnDone(fn func(v T, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(t, fn, opts...)
}

// Result returns a notification's result as the exit status: the exit
// code, or minus the number of the signal that ended the child (see
// ExitStatus).
func (p *Process) Result(result any) int { return as[int](result) }

// Outcome returns the exit status (as ExitStatus gives it) once the child
// has been reaped, or the error that ended the wait; ok is false before
// (see event.Typed).
func (p *Process) Outcome() (status int, ok bool, err error) {
	return typedOutcome[int](p.outcome(), p == nil || p.r == nil, "Process")
}

// Await waits until the child has been reaped and returns its exit status
// (as ExitStatus gives it); a non-zero status is not an error. When ctx ends
// first it returns ctx's error and the child goes on (Kill it, or use
// KillOnClose). See Task.Await.
func (p *Process) Await(ctx context.Context) (int, error) { return event.AwaitValue[int](ctx, p) }

// OnExit calls fn on the loop goroutine with the exit status when the
// child ends (at once, on the loop, if it has). See Task.OnDone for what a
// close does.
func (p *Process) OnExit(fn func(status int, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(p, fn, opts...)
}

// Result returns a notification's result as the command's result.
func (e *Command) Result(result any) *CommandResult { return as[*CommandResult](result) }

// Outcome returns the command's result and error once it has ended; ok is
// false before (see event.Typed).
func (e *Command) Outcome() (res *CommandResult, ok bool, err error) {
	return typedOutcome[*CommandResult](e.outcome(), e == nil || e.r == nil, "Command")
}

// Await waits until the command has ended and returns its result. A
// non-zero exit is not an error (os/exec's Wait would return an
// *exec.ExitError): read the result's ExitCode. A Timeout that ran out is
// one, event.ErrTimeout (Outcome still gives the result). When ctx ends
// first it returns ctx's error and the command goes on (Terminate ends
// it). See Task.Await.
func (e *Command) Await(ctx context.Context) (*CommandResult, error) {
	return event.AwaitValue[*CommandResult](ctx, e)
}

// OnDone calls fn on the loop goroutine with the command's result when it
// ends (at once, on the loop, if it has). See Task.OnDone for what a close
// does.
func (e *Command) OnDone(fn func(res *CommandResult, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(e, fn, opts...)
}

// Result returns a notification's result as the addresses found.
func (a *AddrInfo) Result(result any) []netip.AddrPort { return as[[]netip.AddrPort](result) }

// Outcome returns the addresses found, or the lookup's error, once it has
// completed; ok is false before, and once its reactor has closed (see
// event.Typed).
func (a *AddrInfo) Outcome() (addrs []netip.AddrPort, ok bool, err error) {
	return replayedOutcome[[]netip.AddrPort](a, a == nil || a.r == nil, "AddrInfo")
}

// Result returns a notification's result as the name found.
func (n *NameInfo) Result(result any) NameInfoResult { return as[NameInfoResult](result) }

// Outcome returns the name found, or the lookup's error, once it has
// completed; ok is false before, and once its reactor has closed (see
// event.Typed).
func (n *NameInfo) Outcome() (res NameInfoResult, ok bool, err error) {
	return replayedOutcome[NameInfoResult](n, n == nil || n.r == nil, "NameInfo")
}

// Result returns a notification's result as the request's T (an
// fs.FileInfo for a stat, the bytes read for a read, ...).
func (q *FSRequest[T]) Result(result any) T { return as[T](result) }

// Outcome returns the operation's result, or its error, once the request
// has completed; ok is false before, for a request closed before it
// completed (it never does), and once its reactor has closed (see
// event.Typed).
func (q *FSRequest[T]) Outcome() (v T, ok bool, err error) {
	return replayedOutcome[T](q, q == nil || q.r == nil, "FSRequest")
}

// Await waits for the operation's result (at once when the request has
// completed). When ctx ends first it returns ctx's error and the request
// goes on (Close cancels it). A request closed before it completed gives
// an error matching event.ErrClosed. It must not be called on the loop
// goroutine (event.ErrOnLoop): subscribe there instead (OnDone).
func (q *FSRequest[T]) Await(ctx context.Context) (T, error) {
	if q == nil || q.r == nil {
		var zero T
		return zero, errZero("FSRequest")
	}
	res, err := waitReq(ctx, q)
	return as[T](res), err
}

// OnDone calls fn on the loop goroutine with the operation's result when
// the request completes (at once, on the loop, if it has). A request
// closed before it completed is left out unless opts holds
// event.WithClose.
func (q *FSRequest[T]) OnDone(fn func(v T, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(q, fn, opts...)
}

// Result returns a notification's result as the accepted connection.
func (l *Listener) Result(result any) *IO { return as[*IO](result) }

// OnAccept calls fn on the loop goroutine with each accepted connection
// (the listener must be started) or the error accepting failed with. The
// notification the listener's Close sends is left out unless opts holds
// event.WithClose.
func (l *Listener) OnAccept(fn func(c *IO, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(l, fn, opts...)
}

// Result returns a notification's result as the bytes read: an IO
// notifies each read as a *[]byte (valid during the callback only, as the
// bytes are), which Result reads; nil for a notification without bytes.
func (c *IO) Result(result any) []byte { return readBytes(result) }

// readBytes is IO.Result, for code that must not hold the IO.
func readBytes(result any) []byte {
	if p, ok := result.(*[]byte); ok && p != nil {
		return *p
	}
	return nil
}

// OnRead calls fn on the loop goroutine with each block of bytes read (the
// IO must be started), or with the error reading ended with (io.EOF at the
// end of the stream). p is valid only during the call: it is the IO's
// buffer, reused once fn returns; copy what must outlive it. The
// notification the IO's Close sends is left out unless opts holds
// event.WithClose.
func (c *IO) OnRead(fn func(p []byte, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(c, fn, opts...)
}

// Result returns a notification's result as the datagram received. Its
// Data is valid only during the callback (see OnDatagram).
func (u *UDP) Result(result any) Datagram {
	if d, ok := result.(*Datagram); ok && d != nil {
		return *d
	}
	return as[Datagram](result)
}

// OnDatagram calls fn on the loop goroutine with each datagram received
// (the UDP must be started), or the error receiving failed with. d.Data is
// valid only during the call: copy what must outlive it. d.Addr is shared
// by the datagrams in a row from one sender: read it, do not change it. The notification
// the UDP's Close sends is left out unless opts holds event.WithClose.
func (u *UDP) OnDatagram(fn func(d Datagram, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(u, fn, opts...)
}

// Result returns a notification's result as the change seen.
func (f *FSEvent) Result(result any) FSEventResult { return as[FSEventResult](result) }

// OnChange calls fn on the loop goroutine with each change seen (the
// watch must be started), or the error the watch failed with. The
// notification the watch's Close sends is left out unless opts holds
// event.WithClose.
func (f *FSEvent) OnChange(fn func(ch FSEventResult, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(f, fn, opts...)
}

// Result returns a notification's result as the two stats compared.
func (p *FSPoll) Result(result any) FSPollResult { return as[FSPollResult](result) }

// OnChange calls fn on the loop goroutine with each change the poll sees
// (it must be started), or with the error a stat failed with (res.Prev
// then holds the last stat that succeeded, if any). The notification the
// poll's Close sends is left out unless opts holds event.WithClose.
func (p *FSPoll) OnChange(fn func(res FSPollResult, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(p, fn, opts...)
}

// Result returns a notification's result as the events that fired.
func (p *Poll) Result(result any) PollEvents { return as[PollEvents](result) }

// OnReady calls fn on the loop goroutine with the events that fired each
// time the descriptor is ready (the poll must be started), or with the
// error polling failed with. The notification the poll's Close sends is
// left out unless opts holds event.WithClose.
func (p *Poll) OnReady(fn func(ev PollEvents, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(p, fn, opts...)
}

// Result returns a notification's result as the events that fired, of
// the proxy's mask.
func (x *PollProxy) Result(result any) PollEvents { return as[PollEvents](result) }

// OnReady is Poll.OnReady for the proxy: fn gets the events of its mask.
func (x *PollProxy) OnReady(fn func(ev PollEvents, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(x, fn, opts...)
}

// Result returns a notification's result as the signal that arrived.
func (s *Signal) Result(result any) syscall.Signal { return as[syscall.Signal](result) }

// OnSignal calls fn on the loop goroutine each time the signal arrives
// (the Signal must be started). The notification the Signal's Close sends
// is left out unless opts holds event.WithClose.
func (s *Signal) OnSignal(fn func(sig syscall.Signal, err error), opts ...event.OnOption) (*event.Callback, error) {
	return event.On(s, fn, opts...)
}

// Result returns struct{}: a phase's notifications carry no result.
func (p *Phase) Result(any) struct{} { return struct{}{} }

// Result returns struct{}: a trigger's notifications carry no result.
func (t *Trigger) Result(any) struct{} { return struct{}{} }

// outcome returns the kind's stored outcome, nil for a nil receiver.
func (t *Task[T]) outcome() *outcome {
	if t == nil {
		return nil
	}
	return &t.out
}

func (t *Thread[T]) outcome() *outcome {
	if t == nil {
		return nil
	}
	return &t.out
}

func (p *Process) outcome() *outcome {
	if p == nil {
		return nil
	}
	return &p.out
}

func (e *Command) outcome() *outcome {
	if e == nil {
		return nil
	}
	return &e.out
}
