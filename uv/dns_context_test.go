package uv_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// endingContext is a context the test ends itself, with the error it
// chooses: a deadline that passes without a clock deciding when.
type endingContext struct {
	context.Context // Background: no deadline, no values
	done            chan struct{}
	err             error // set before done is closed
}

func newEndingContext() *endingContext {
	return &endingContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *endingContext) Done() <-chan struct{} { return c.done }

func (c *endingContext) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *endingContext) end(err error) {
	c.err = err
	close(c.done)
}

// dnsLookups makes an AddrInfo or a NameInfo with ctx as its Context.
var dnsLookups = []struct {
	name string
	make func(r *reactor.Reactor, ctx context.Context) (event.Event, error)
}{
	{"AddrInfo", func(r *reactor.Reactor, ctx context.Context) (event.Event, error) {
		return asEvent(uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{Context: ctx}))
	}},
	{"NameInfo", func(r *reactor.Reactor, ctx context.Context) (event.Event, error) {
		return asEvent(uv.NewNameInfo(r, netip.MustParseAddrPort("127.0.0.1:22"), uv.NameInfoHints{Context: ctx}))
	}},
}

// asEvent is a constructor's result as an event.Event: nil when it
// failed, not a nil pointer in an interface.
func asEvent[E event.Event](ev E, err error) (event.Event, error) {
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// A lookup's Context that ends before the answer completes the lookup at
// once, with a *DNSError that matches the Context's error with errors.Is:
// a deadline is EAI_AGAIN with IsTimeout (a net.DNSError's timeout), a
// cancel EAI_CANCELED. Subscribers hear that once, never the answer; the
// lookup itself is cancelled as Close cancels it (the resolver's context
// ends), and nothing is left.
func TestDNSContextEndsLookup(t *testing.T) {
	for _, lk := range dnsLookups {
		for _, end := range []error{context.DeadlineExceeded, context.Canceled} {
			t.Run(lk.name+"/"+end.Error(), func(t *testing.T) {
				uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
					blocked := newBlockingResolver(1)
					uv.UvtSetResolver(t, blocked)
					ctx := newEndingContext()
					ev, err := lk.make(u.Reactor, ctx)
					uv.UvtMust(t, err)
					c := uv.UvtSubscribe(t, ev, u.Owner().Owned)
					uv.UvtRecv(t, blocked.entered, "the lookup reaching the resolver")
					stop := uv.UvtServe(t, u)
					ctx.end(end)
					call := c.Next(t)
					if !errors.Is(call.Err, end) {
						t.Errorf("lookup ended by its Context: %v, want an error matching %v", call.Err, end)
					}
					var de *uv.DNSError
					if !errors.As(call.Err, &de) {
						t.Fatalf("lookup ended by its Context: %T %v, want a *uv.DNSError", call.Err, call.Err)
					}
					wantCode, timeout := uv.ErrCanceled, false
					if end == context.DeadlineExceeded {
						wantCode, timeout = uv.ErrTryAgain, true
					}
					if !errors.Is(call.Err, wantCode) || de.IsTimeout != timeout || de.Err != end {
						t.Errorf("DNSError %+v: want %v, IsTimeout %v, Err %v", de, wantCode, timeout, end)
					}
					if !strings.HasSuffix(de.Error(), ": "+end.Error()) {
						t.Errorf("Error() = %q, want it to say %q", de.Error(), end)
					}
					if !strings.Contains(ev.Info(), "failed") {
						t.Errorf("Info = %q, want it failed", ev.Info())
					}
					if err := uv.UvtRecv(t, blocked.ended, "the resolver's context ending"); !errors.Is(err, context.Canceled) {
						t.Errorf("the resolver's context ended with %v, want Canceled", err)
					}
					uv.UvtWaitFor(t, "the lookup let go of", func() bool { return u.Stats().Handles[strings.ToLower(lk.name)] == 0 })
					stop()
					if calls := c.Calls(); len(calls) != 1 {
						t.Errorf("notifications %+v, want one", calls)
					}
					uv.UvtShutdown(t, u, false)
				})
			})
		}
	}
}

// A Context already done is not refused (as StartProcess refuses one):
// the lookup is made and completes with the Context's error on the loop's
// next turn, asking the resolver nothing, on both drivers, so that lookups
// made in bulk under one deadline are collected alike.
func TestDNSContextAlreadyDone(t *testing.T) {
	for _, lk := range dnsLookups {
		for _, end := range []error{context.DeadlineExceeded, context.Canceled} {
			t.Run(lk.name+"/"+end.Error(), func(t *testing.T) {
				uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
					blocked := newBlockingResolver(1)
					uv.UvtSetResolver(t, blocked)
					ctx := newEndingContext()
					ctx.end(end)
					ev, err := lk.make(u.Reactor, ctx)
					uv.UvtMust(t, err)
					c := uv.UvtSubscribe(t, ev, u.Owner().Owned)
					stop := uv.UvtServe(t, u)
					call := c.Next(t)
					var de *uv.DNSError
					if !errors.Is(call.Err, end) || !errors.As(call.Err, &de) || de.IsTimeout != (end == context.DeadlineExceeded) {
						t.Errorf("lookup with a Context already done: %v, want a *uv.DNSError matching %v", call.Err, end)
					}
					uv.UvtWaitFor(t, "the lookup let go of", func() bool { return len(u.Stats().Handles) == 0 })
					stop()
					if len(blocked.entered) != 0 {
						t.Error("a lookup whose Context was done asked the resolver")
					}
					if calls := c.Calls(); len(calls) != 1 {
						t.Errorf("notifications %+v, want one", calls)
					}
					uv.UvtShutdown(t, u, false)
				})
			})
		}
	}
}

// A lookup answered before its Context ends keeps its answer, and stops
// watching the Context when it completes: no goroutine is left waiting on
// a Context that has not ended.
func TestDNSContextAnsweredFirst(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		stop := uv.UvtServe(t, u)
		ctx := newEndingContext()
		a, err := uv.NewAddrInfo(u.Reactor, "127.0.0.1", "80", uv.AddrInfoHints{Context: ctx})
		uv.UvtMust(t, err)
		n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"),
			uv.NameInfoHints{NumericHost: true, NumericService: true, Context: ctx})
		uv.UvtMust(t, err)
		addrs, err := a.Await(waitCtx(t))
		if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddrPort("127.0.0.1:80") {
			t.Errorf("AddrInfo = %v, %v; want [127.0.0.1:80]", addrs, err)
		}
		if res, err := n.Await(waitCtx(t)); err != nil || res != (uv.NameInfoResult{Host: "127.0.0.1", Service: "80"}) {
			t.Errorf("NameInfo = %+v, %v", res, err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds) // no goroutine waits on ctx
		ctx.end(context.DeadlineExceeded)
	})
}
