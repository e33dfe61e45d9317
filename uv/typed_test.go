package uv_test

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Every kind of uv, reactor and async is an event.Source of its result
// type, and every kind that stores a result an event.Typed: the compiler
// checks the list.
var (
	_ event.Source[*uv.IO]            = (*uv.Listener)(nil)
	_ event.Source[[]byte]            = (*uv.IO)(nil)
	_ event.Source[uv.Datagram]       = (*uv.UDP)(nil)
	_ event.Source[uv.FSEventResult]  = (*uv.FSEvent)(nil)
	_ event.Source[uv.PollEvents]     = (*uv.Poll)(nil)
	_ event.Source[uv.PollEvents]     = (*uv.PollProxy)(nil)
	_ event.Source[syscall.Signal]    = (*uv.Signal)(nil)
	_ event.Source[struct{}]          = (*uv.Phase)(nil)
	_ event.Source[struct{}]          = (*uv.Trigger)(nil)
	_ event.Source[struct{}]          = (*reactor.Timer)(nil)
	_ event.Source[struct{}]          = (*async.Timeout)(nil)
	_ event.Source[int]               = (*reactor.Coroutine[int])(nil)
	_ event.Source[int]               = (*event.Future[int])(nil)
	_ event.Source[int]               = (*async.Op[int])(nil)
	_ event.Typed[int]                = (*uv.Task[int])(nil)
	_ event.Typed[string]             = (*uv.Thread[string])(nil)
	_ event.Typed[int]                = (*uv.Process)(nil)
	_ event.Typed[*uv.CommandResult]  = (*uv.Command)(nil)
	_ event.Typed[[]netip.AddrPort]   = (*uv.AddrInfo)(nil)
	_ event.Typed[uv.NameInfoResult]  = (*uv.NameInfo)(nil)
	_ event.Source[int]               = (*uv.Task[int])(nil)
	_ event.Source[string]            = (*uv.Thread[string])(nil)
	_ event.Source[int]               = (*uv.Process)(nil)
	_ event.Source[*uv.CommandResult] = (*uv.Command)(nil)
	_ event.Source[[]netip.AddrPort]  = (*uv.AddrInfo)(nil)
	_ event.Source[uv.NameInfoResult] = (*uv.NameInfo)(nil)
	_ event.Typed[[]byte]             = (*uv.FSRequest[[]byte])(nil)
	_ event.Typed[int]                = (*uv.FSRequest[int])(nil)
	_ event.Source[[]byte]            = (*uv.FSRequest[[]byte])(nil)
	_ event.Source[int]               = (*uv.FSRequest[int])(nil)
)

// The typed waits take a slice of one kind as it is, and give values (and
// errors) by position: tasks, threads, processes, commands, lookups.
func TestTypedWaitsTakeEveryStoringKind(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ctx := t.Context()
		boom := errors.New("boom")

		var tasks []*uv.Task[int]
		for i := range 3 {
			tk, err := uv.QueueTask(u.Reactor, func(context.Context) (int, error) { return i * 10, nil })
			uv.UvtMust(t, err)
			tasks = append(tasks, tk)
		}
		vs, err := event.AwaitAll(ctx, tasks...)
		if diff := cmp.Diff([]int{0, 10, 20}, vs); diff != "" || err != nil {
			t.Errorf("AwaitAll(tasks) (-want +got), err %v:\n%s", err, diff)
		}
		if v, ok, err := tasks[2].Outcome(); v != 20 || !ok || err != nil {
			t.Errorf("Task.Outcome = %d, %v, %v; want 20, true, nil", v, ok, err)
		}

		ths := make([]*uv.Thread[string], 2)
		ths[0], err = uv.NewThread(u.Reactor, func(context.Context) (string, error) { return "", boom })
		uv.UvtMust(t, err)
		ths[1], err = uv.NewThread(u.Reactor, func(context.Context) (string, error) { return "b", nil })
		uv.UvtMust(t, err)
		svs, errs, err := event.AwaitAllSettled(ctx, ths...)
		if diff := cmp.Diff([]string{"", "b"}, svs); diff != "" || err != nil {
			t.Errorf("AwaitAllSettled(threads) values (-want +got), err %v:\n%s", err, diff)
		}
		if diff := cmp.Diff([]error{boom, nil}, errs, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("AwaitAllSettled(threads) errors (-want +got):\n%s", diff)
		}

		var procs []*uv.Process
		for _, code := range []string{"exit 0", "exit 3"} {
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{"/bin/sh", "-c", code}})
			uv.UvtMust(t, err)
			procs = append(procs, p)
		}
		statuses, err := event.AwaitAll(ctx, procs...)
		if diff := cmp.Diff([]int{0, 3}, statuses); diff != "" || err != nil {
			t.Errorf("AwaitAll(processes) (-want +got), err %v:\n%s", err, diff)
		}

		ex, err := uv.NewCommand(u.Reactor, "echo typed", uv.CommandOptions{Mode: uv.CaptureAll})
		uv.UvtMust(t, err)
		res, err := event.AwaitValue(ctx, ex)
		if err != nil || res == nil || string(res.Output) != "typed\n" {
			t.Errorf("AwaitValue(exec) = %+v, %v; want output \"typed\\n\"", res, err)
		}

		lookups := make([]*uv.AddrInfo, 2)
		for i := range lookups {
			lookups[i], err = uv.NewAddrInfo(u.Reactor, "127.0.0.1", "80", uv.AddrInfoHints{Network: "tcp4"})
			uv.UvtMust(t, err)
		}
		winner, addrs, err := event.AwaitFirst(ctx, lookups...)
		want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80")}
		if diff := cmp.Diff(want, addrs, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); winner < 0 || diff != "" || err != nil {
			t.Errorf("AwaitFirst(lookups) = %d, %v, %v; want 127.0.0.1:80", winner, addrs, err)
		}
		ni, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
		uv.UvtMust(t, err)
		if _, err := event.AwaitValue(ctx, ni); err != nil {
			t.Errorf("AwaitValue(nameinfo) = %v", err)
		}
		if _, ok, err := ni.Outcome(); !ok || err != nil {
			t.Errorf("NameInfo.Outcome after the wait = %v, %v; want a stored outcome", ok, err)
		}
	})
}

// Outcome says "not yet" before a kind has its result.
func TestTypedOutcomeBeforeCompletion(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		gate := make(chan struct{})
		tk, err := uv.QueueTask(u.Reactor, func(context.Context) (int, error) { <-gate; return 1, nil })
		uv.UvtMust(t, err)
		if v, ok, err := tk.Outcome(); ok || v != 0 || err != nil {
			t.Errorf("Outcome of a running task = %d, %v, %v; want 0, false, nil", v, ok, err)
		}
		ai, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		uv.UvtMust(t, err)
		if _, ok, _ := ai.Outcome(); ok {
			t.Error("Outcome of a lookup before the loop ran: ok, want not yet")
		}
		close(gate)
		uv.UvtMust(t, u.Run(context.Background()))
		if v, ok, err := tk.Outcome(); v != 1 || !ok || err != nil {
			t.Errorf("Outcome after Run = %d, %v, %v; want 1, true, nil", v, ok, err)
		}
	})
}
