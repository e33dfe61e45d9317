package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// Lookups of localhost, of names in /etc/hosts and of literal addresses
// only, on both drivers: nothing here needs a network or a DNS server.
// Names that are not found are ones no resolver sends a query for
// ("bad..name" has an empty label). The pure-Go driver's mapping of
// resolver failures is checked with fake resolvers (dns_test.go).

func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	t.Cleanup(cancel)
	return ctx
}

var cmpAddrPorts = cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })

// localhost resolves to loopback addresses with the service's port; the
// result is stored, shown by Info and replayed to a late subscriber.
func TestAddrInfoLocalhost(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, err := uv.NewAddrInfo(u.Reactor, "localhost", "80", uv.AddrInfoHints{Network: "tcp"})
		uv.UvtMust(t, err)
		if got, want := a.Info(), `AddrInfo(host="localhost", service="80", network=tcp, pending)`; got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		if s := u.Stats(); s.Handles["addrinfo"] != 1 {
			t.Errorf("Stats with a lookup in flight: %v, want one addrinfo", s.Handles)
		}
		// A request runs from creation: Start and Stop change nothing.
		if err := a.Start(); err != nil || eventkind.LoopRefs(a) != 0 {
			t.Errorf("Start on a lookup in flight = %v (refs %d), want a no-op", err, eventkind.LoopRefs(a))
		}
		uv.UvtMust(t, a.Stop())
		stop := uv.UvtServe(t, u)
		addrs, err := a.Await(waitCtx(t))
		stop()
		if err != nil || len(addrs) == 0 {
			t.Fatalf("localhost: %v, %v", addrs, err)
		}
		for _, ap := range addrs {
			if !ap.Addr().IsLoopback() || ap.Port() != 80 {
				t.Errorf("localhost gave %v, want loopback addresses with port 80", ap)
			}
		}
		if got := a.Info(); !strings.HasSuffix(got, "addrs="+itoa(len(addrs))+")") {
			t.Errorf("Info after the answer = %q", got)
		}
		var replayed any
		uv.UvtMust(t, a.Replay(event.NewCallback(func(_ event.Event, res any, _ error) { replayed = res })))
		if diff := cmp.Diff(addrs, replayed, cmpAddrPorts); diff != "" {
			t.Errorf("replay (-want +got):\n%s", diff)
		}
		again, err := a.Await(waitCtx(t)) // a completed lookup replays
		if err != nil || len(again) != len(addrs) {
			t.Errorf("second Wait: %v, %v", again, err)
		}
		if !a.Flags().Has(event.Closed) {
			t.Errorf("a completed lookup is not closed: %v", a.Flags())
		}
		if err := a.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start on a completed lookup = %v, want ErrClosed", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// Literal addresses, by network, and no host: family and port as asked, on
// both drivers alike.
func TestAddrInfoLiterals(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		for _, tc := range []struct {
			host, service string
			hints         uv.AddrInfoHints
			want          []string
		}{
			{"127.0.0.1", "", uv.AddrInfoHints{}, []string{"127.0.0.1:0"}},
			{"::1", "443", uv.AddrInfoHints{Network: "tcp6", NumericHost: true}, []string{"[::1]:443"}},
			{"127.0.0.1", "53", uv.AddrInfoHints{Network: "udp4", NumericService: true}, []string{"127.0.0.1:53"}},
			{"127.0.0.1", "domain", uv.AddrInfoHints{Network: "udp"}, []string{"127.0.0.1:53"}},
			{"127.1", "080", uv.AddrInfoHints{NumericHost: true}, []string{"127.0.0.1:80"}},
			{"0x7f000001", "", uv.AddrInfoHints{Network: "ip4"}, []string{"127.0.0.1:0"}},
			{"::ffff:127.0.0.1", "", uv.AddrInfoHints{Network: "ip6"}, []string{"[::ffff:127.0.0.1]:0"}},
			{"", "8080", uv.AddrInfoHints{Network: "tcp4", Passive: true}, []string{"0.0.0.0:8080"}},
			{"", "8080", uv.AddrInfoHints{Network: "tcp4"}, []string{"127.0.0.1:8080"}},
			{"", "8080", uv.AddrInfoHints{Network: "tcp6"}, []string{"[::1]:8080"}},
			{"", "8080", uv.AddrInfoHints{}, []string{"[::1]:8080", "127.0.0.1:8080"}},
			{"", "8080", uv.AddrInfoHints{Passive: true}, []string{"0.0.0.0:8080", "[::]:8080"}},
			{"LocalHost", "ssh", uv.AddrInfoHints{Network: "tcp4"}, []string{"127.0.0.1:22"}},
		} {
			a, err := uv.NewAddrInfo(u.Reactor, tc.host, tc.service, tc.hints)
			uv.UvtMust(t, err)
			got, err := a.Await(waitCtx(t))
			if err != nil {
				t.Errorf("%q %q %+v: %v", tc.host, tc.service, tc.hints, err)
				continue
			}
			var want []netip.AddrPort
			for _, s := range tc.want {
				want = append(want, netip.MustParseAddrPort(s))
			}
			if diff := cmp.Diff(want, got, cmpAddrPorts); diff != "" {
				t.Errorf("%q %q %+v (-want +got):\n%s", tc.host, tc.service, tc.hints, diff)
			}
		}
		// An IPv6 zone by interface name comes back as its index.
		if lo, err := net.InterfaceByName("lo"); err != nil {
			t.Logf("no interface lo (%v): the zone case is not checked", err)
		} else {
			a, err := uv.NewAddrInfo(u.Reactor, "fe80::1%lo", "", uv.AddrInfoHints{})
			uv.UvtMust(t, err)
			got, err := a.Await(waitCtx(t))
			want := []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("fe80::1").WithZone(itoa(lo.Index)), 0)}
			if diff := cmp.Diff(want, got, cmpAddrPorts); err != nil || diff != "" {
				t.Errorf("fe80::1%%lo: %v (-want +got):\n%s", err, diff)
			}
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Bad input: refused at once (EINVAL), or failing with the EAI_* error
// that errors.Is matches, the same one on both drivers; the reactor goes
// on.
func TestAddrInfoErrors(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for _, tc := range []struct{ host, service, network string }{
			{"", "", ""}, {"localhost", "", "tcp5"}, {"local\x00host", "", ""}, {"localhost", "", "unix"},
			{strings.Repeat("a", 2000), "", ""}, {"localhost", strings.Repeat("9", 100), ""},
			{"localhost", "70000", ""}, {"localhost", "65536", "udp"},
		} {
			if a, err := uv.NewAddrInfo(u.Reactor, tc.host, tc.service, uv.AddrInfoHints{Network: tc.network}); !errors.Is(err, syscall.EINVAL) || a != nil {
				t.Errorf("NewAddrInfo(%q, %q, %q) = %v, %v; want EINVAL", tc.host, tc.service, tc.network, a, err)
			}
		}
		if _, err := uv.NewAddrInfo(nil, "localhost", "", uv.AddrInfoHints{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("nil reactor: %v", err)
		}
		if s := u.Stats(); len(s.Handles) != 0 || s.Active != 0 {
			t.Errorf("refused lookups left %v, active %d", s.Handles, s.Active)
		}
		stop := uv.UvtServe(t, u)
		for _, tc := range []struct {
			name          string
			host, service string
			hints         uv.AddrInfoHints
			want          error
		}{
			{"a name where a literal is required", "localhost", "", uv.AddrInfoHints{NumericHost: true}, uv.ErrNoName},
			{"a service name where a number is required", "127.0.0.1", "http", uv.AddrInfoHints{NumericService: true}, uv.ErrNoName},
			{"an unknown service", "127.0.0.1", "no-such-service-here", uv.AddrInfoHints{Network: "tcp"}, uv.ErrService},
			{"a negative port", "127.0.0.1", "-1", uv.AddrInfoHints{}, uv.ErrService},
			{"a name no resolver looks up (RFC 7686)", "no-such-host.onion", "", uv.AddrInfoHints{}, uv.ErrNoName},
			{"an IPv6 literal for IPv4", "::1", "", uv.AddrInfoHints{Network: "tcp4"}, uv.ErrAddrFamily},
			{"an IPv4 literal for IPv6", "127.0.0.1", "", uv.AddrInfoHints{Network: "udp6"}, uv.ErrAddrFamily},
			{"a zone naming no interface", "fe80::1%no-such-if0", "", uv.AddrInfoHints{}, uv.ErrNoName},
		} {
			a, err := uv.NewAddrInfo(u.Reactor, tc.host, tc.service, tc.hints)
			uv.UvtMust(t, err)
			var dnsErr *uv.DNSError
			if _, err := a.Await(waitCtx(t)); !errors.Is(err, tc.want) || !errors.As(err, &dnsErr) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			} else if dnsErr.Op != "uv_getaddrinfo" || !strings.Contains(err.Error(), "EAI_") || !strings.Contains(err.Error(), tc.host) {
				t.Errorf("%s: error %q (%+v) does not say what failed", tc.name, err, dnsErr)
			}
			if !strings.HasSuffix(a.Info(), ", failed)") {
				t.Errorf("Info of a failed lookup: %q", a.Info())
			}
		}
		// Still serving.
		a, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		uv.UvtMust(t, err)
		if _, err := a.Await(waitCtx(t)); err != nil {
			t.Errorf("after the failures: %v", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// Every UV_EAI_* code maps to its own error, and only to it, and reads as
// libuv writes it (where libuv is linked in, its own words are compared);
// another code unwraps to its errno.
func TestDNSErrorMapping(t *testing.T) {
	all := uv.UvtEAIErrors()
	for code, want := range all {
		err := error(&uv.DNSError{Op: "uv_getaddrinfo", Name: "x", Code: code})
		for _, other := range all {
			if got := errors.Is(err, other); got != (other == want) {
				t.Errorf("code %d: errors.Is(%v, %v) = %v", code, err, other, got)
			}
		}
		if name, msg := uvcgo.ErrorName(code); name != "" {
			if got, want := err.Error(), `uv_getaddrinfo "x": `+name+" ("+msg+")"; got != want {
				t.Errorf("code %d reads %q; libuv: %q", code, got, want)
			}
		}
		if !strings.Contains(err.Error(), "EAI_") {
			t.Errorf("code %d reads %q", code, err)
		}
	}
	if len(all) != 14 {
		t.Errorf("%d EAI codes mapped, want 14", len(all))
	}
	err := error(&uv.DNSError{Op: "uv_getaddrinfo", Name: "x", Code: -int(syscall.ENOMEM)})
	if !errors.Is(err, syscall.ENOMEM) || errors.Is(err, uv.ErrNoMemory) {
		t.Errorf("ENOMEM: %v", err)
	}
}

// Disposing lookups before they complete cancels them: the subscribers
// hear ErrClosed once, from the Dispose, never the answer; every lookup is
// let go of (on libuv, freed by libuv's callback); nothing is reported.
func TestAddrInfoDisposeBeforeCompletion(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const n = 200
		var counters []*uv.UvtCounter
		uv.UvtMust(t, u.Call(func() {
			var lookups []*uv.AddrInfo
			for range n {
				a, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
				if err != nil {
					t.Error(err)
					return
				}
				lookups = append(lookups, a)
				counters = append(counters, uv.UvtSubscribe(t, a, u.Owner().Owned))
			}
			for _, a := range lookups {
				a.Dispose()
			}
		}))
		uv.UvtTurnUntil(t, u, "every request's callback", func() bool { return u.Stats().Handles["addrinfo"] == 0 })
		for i, c := range counters {
			calls := c.Calls()
			if len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
				t.Fatalf("lookup %d: notifications %+v, want one ErrClosed", i, calls)
			}
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A lookup in flight keeps Run going, and a coroutine awaiting it is no
// deadlock.
func TestAddrInfoKeepsRunAliveNoDeadlock(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		uv.UvtMust(t, err)
		n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
		uv.UvtMust(t, err)
		co, err := reactor.Spawn(context.Background(), u.Reactor, func(ctx context.Context) (any, error) {
			_, err := event.Await(ctx, event.All(), a, n)
			return nil, err
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, u.Run(context.Background()))
		if _, ok, err := co.Outcome(); !ok || err != nil {
			t.Fatalf("coroutine awaiting lookups: done=%v err=%v (a false deadlock?)", ok, err)
		}
		if strings.Contains(a.Info(), "pending") || strings.Contains(n.Info(), "pending") {
			t.Errorf("Run returned with a lookup pending: %s, %s", a.Info(), n.Info())
		}
		uv.UvtShutdown(t, u, false)
	})
}

// The reactor's Close with lookups in flight: every subscriber hears
// ErrClosed, nothing is left, and new lookups are refused; every lookup,
// held in flight here by a resolver that answers only when its context
// ends, has its context cancelled.
func TestDNSCloseWhileBusy(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const n = 50
		blocked := newBlockingResolver(n)
		uv.UvtSetResolver(t, blocked)
		counters := startLookups(t, u, n, "localhost", netip.MustParseAddrPort("127.0.0.1:22"), blocked.entered)
		uv.UvtShutdown(t, u, false)
		checkEachClosed(t, counters)
		for range n {
			if err := uv.UvtRecv(t, blocked.ended, "a lookup's context ending"); !errors.Is(err, context.Canceled) {
				t.Errorf("a lookup's context ended with %v, want Canceled", err)
			}
		}
		if _, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{}); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("NewAddrInfo on a closed reactor: %v", err)
		}
		if _, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:22"), uv.NameInfoHints{}); !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("NewNameInfo on a closed reactor: %v", err)
		}
	})
}

// Lookups dropped without Close or Dispose under GOGC=10 complete, free
// what they hold and leave nothing counted.
func TestDNSDroppedWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for round := range 5 {
			uv.UvtMust(t, u.Call(func() {
				for i := range 100 {
					var err error
					if i%2 == round%2 {
						_, err = uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
					} else {
						_, err = uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:22"), uv.NameInfoHints{})
					}
					if err != nil {
						t.Error(err)
					}
				}
			}))
			runtime.GC()
		}
		uv.UvtCollectUntil(t, u, "every lookup to complete", func() bool {
			s := u.Stats()
			return len(s.Handles) == 0 && s.CHandles == 0 && s.Active == 0
		})
		uv.UvtShutdown(t, u, false)
	})
}

// nameCase is a NameInfo lookup and its answer.
type nameCase struct {
	addr  string
	hints uv.NameInfoHints
	want  uv.NameInfoResult
}

// NameInfo of literal loopback addresses: numeric, and by name from the
// hosts file, services by name from the services file; bad input refused.
func TestNameInfo(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		cases := []nameCase{
			{"127.0.0.1:22", uv.NameInfoHints{NumericHost: true, NumericService: true}, uv.NameInfoResult{Host: "127.0.0.1", Service: "22"}},
			{"127.0.0.1:80", uv.NameInfoHints{NumericHost: true}, uv.NameInfoResult{Host: "127.0.0.1", Service: "http"}},
			{"[::1]:53", uv.NameInfoHints{NumericHost: true, Datagram: true}, uv.NameInfoResult{Host: "::1", Service: "domain"}},
			{"127.0.0.1:22", uv.NameInfoHints{NameRequired: true, NumericService: true}, uv.NameInfoResult{Host: "localhost", Service: "22"}},
			{"127.0.0.1:512", uv.NameInfoHints{}, uv.NameInfoResult{Host: "localhost", Service: "exec"}},
			{"127.0.0.1:512", uv.NameInfoHints{Datagram: true, NoFQDN: true}, uv.NameInfoResult{Host: "localhost", Service: "biff"}},
			{"127.0.0.1:0", uv.NameInfoHints{NumericHost: true}, uv.NameInfoResult{Host: "127.0.0.1", Service: "0"}},
			{"127.0.0.1:65000", uv.NameInfoHints{NumericHost: true}, uv.NameInfoResult{Host: "127.0.0.1", Service: "65000"}},
			{"[::ffff:127.0.0.1]:443", uv.NameInfoHints{NumericHost: true}, uv.NameInfoResult{Host: "::ffff:127.0.0.1", Service: "https"}},
		}
		if lo, err := net.InterfaceByName("lo"); err != nil {
			t.Logf("no interface lo (%v): the zone cases are not checked", err)
		} else {
			cases = append(cases,
				nameCase{"[fe80::1%" + itoa(lo.Index) + "]:80", uv.NameInfoHints{NumericHost: true}, uv.NameInfoResult{Host: "fe80::1%lo", Service: "http"}},
				nameCase{"[fe80::1%lo]:80", uv.NameInfoHints{NumericHost: true, NumericService: true}, uv.NameInfoResult{Host: "fe80::1%lo", Service: "80"}})
		}
		for _, tc := range cases {
			n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort(tc.addr), tc.hints)
			uv.UvtMust(t, err)
			got, err := n.Await(waitCtx(t))
			if err != nil {
				t.Errorf("%s %+v: %v", tc.addr, tc.hints, err)
				continue
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %+v (-want +got):\n%s", tc.addr, tc.hints, diff)
			}
			if info := n.Info(); !strings.Contains(info, "host=\""+got.Host+"\"") {
				t.Errorf("Info = %q", info)
			}
		}
		stop()
		for _, bad := range []netip.AddrPort{{}, netip.AddrPortFrom(netip.MustParseAddr("fe80::1%no-such-if0"), 1)} {
			if n, err := uv.NewNameInfo(u.Reactor, bad, uv.NameInfoHints{}); !errors.Is(err, syscall.EINVAL) || n != nil {
				t.Errorf("NewNameInfo(%v) = %v, %v; want EINVAL", bad, n, err)
			}
		}
		if _, err := uv.NewNameInfo(nil, netip.MustParseAddrPort("127.0.0.1:1"), uv.NameInfoHints{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("nil reactor: %v", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// blockingResolver never answers: each lookup says it began (entered),
// waits for its context to end, and says how it ended (ended).
type blockingResolver struct {
	entered chan struct{}
	ended   chan error
}

func newBlockingResolver(n int) *blockingResolver {
	return &blockingResolver{entered: make(chan struct{}, n), ended: make(chan error, n)}
}

func (b *blockingResolver) wait(ctx context.Context) error {
	b.entered <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return ctx.Err()
}

func (b *blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	return nil, b.wait(ctx)
}

func (b *blockingResolver) LookupPort(ctx context.Context, _, _ string) (int, error) {
	return 0, b.wait(ctx)
}

func (b *blockingResolver) LookupAddr(ctx context.Context, _ string) ([]string, error) {
	return nil, b.wait(ctx)
}

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

// exhaustDescriptors lowers the soft descriptor limit and opens descriptors
// until the process has none left, then gives them back and restores the
// limit when the test ends (fill and restore: no child process needed).
func exhaustDescriptors(t *testing.T) (release func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 512
	if low.Cur > old.Max {
		t.Skipf("hard descriptor limit %d below 512: cannot lower the soft limit for the test", old.Max)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var fds []int
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restoring RLIMIT_NOFILE: %v", err)
		}
	}
	t.Cleanup(release)
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EMFILE) {
			return release
		}
		if err != nil {
			release()
			t.Fatalf("filling descriptors: %v", err)
		}
		fds = append(fds, fd)
	}
}

// A lookup that fails because the process has no descriptor left says so
// (EMFILE), on both drivers, rather than EAI_NONAME, a lie about the name.
func TestLookupUnderDescriptorExhaustionSaysEMFILE(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ctx := waitCtx(t)
		release := exhaustDescriptors(t)
		a, aerr := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		var addrs []netip.AddrPort
		if aerr == nil {
			addrs, aerr = a.Await(ctx)
		}
		n, nerr := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{NameRequired: true})
		if nerr == nil {
			_, nerr = n.Await(ctx)
		}
		release()
		if aerr == nil {
			t.Logf("AddrInfo(localhost) succeeded without a descriptor: %v", addrs)
		} else if !errors.Is(aerr, syscall.EMFILE) || errors.Is(aerr, uv.ErrNoName) {
			t.Errorf("AddrInfo(localhost) without descriptors = %v, want EMFILE, not EAI_NONAME", aerr)
		}
		if nerr != nil && (!errors.Is(nerr, syscall.EMFILE) || errors.Is(nerr, uv.ErrNoName)) {
			t.Errorf("NameInfo(127.0.0.1) without descriptors = %v, want EMFILE, not EAI_NONAME", nerr)
		}
	})
}

// gatedResolver holds every lookup until Fire lets one through to Go's
// resolver (or the lookup's context ends): the conformance rows' lookups
// stay in flight until the table fires them, as a Task's function waits
// behind its gate.
type gatedResolver struct {
	held chan heldLookup
	on   sync.Map // event.Event → struct{}: the table's lookups
}

type heldLookup struct {
	ctx  context.Context
	open chan struct{}
}

func newGatedResolver(t *testing.T) *gatedResolver {
	g := &gatedResolver{held: make(chan heldLookup, 1024)}
	uv.UvtSetResolver(t, g)
	return g
}

// gate returns what notes that a lookup New made on r waits for fire.
func gate[E event.Event](g *gatedResolver, _ *reactor.Reactor) func(E, error) (event.Event, error) {
	return func(ev E, err error) (event.Event, error) {
		if err != nil {
			return nil, err
		}
		g.on.Store(event.Event(ev), struct{}{})
		return ev, nil
	}
}

// fire lets the lookup of the table through, the one held whose context is
// still alive (those of earlier checks were cancelled when they closed).
func (g *gatedResolver) fire(ev event.Event) error { return g.detach(ev)() }

// detach takes ev out of the lookups to let through and returns what lets
// it through (fire), holding no reference to ev.
func (g *gatedResolver) detach(ev event.Event) func() error {
	if _, ok := g.on.LoadAndDelete(ev); !ok {
		return func() error { return nil }
	}
	return g.open
}

// open lets the oldest held lookup whose context is alive through.
func (g *gatedResolver) open() error {
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	for {
		select {
		case h := <-g.held:
			if h.ctx.Err() == nil {
				close(h.open)
				return nil
			}
		case <-ctx.Done():
			return errors.New("no lookup reached the resolver")
		}
	}
}

func (g *gatedResolver) wait(ctx context.Context) error {
	h := heldLookup{ctx, make(chan struct{})}
	g.held <- h
	select {
	case <-h.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

func (g *gatedResolver) LookupPort(ctx context.Context, network, service string) (int, error) {
	if err := g.wait(ctx); err != nil {
		return 0, err
	}
	return net.DefaultResolver.LookupPort(ctx, network, service)
}

func (g *gatedResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return net.DefaultResolver.LookupAddr(ctx, addr)
}

// The pure-Go driver's lookups against fake resolvers: how Go's errors
// map to the EAI_* values, what is made of Go's answers, and cancelling.
// These tests swap the package's resolver, so none runs in parallel.

// Each kind of failure of Go's resolver maps to the closest EAI_* error,
// and only to it; the resolver's error stays reachable.
func TestResolverErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"not found", &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, uv.ErrNoName},
		{"timeout", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, uv.ErrTryAgain},
		{"temporary", &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}, uv.ErrTryAgain},
		{"permanent", &net.DNSError{Err: "server misbehaving", Name: "x"}, uv.ErrFail},
		{"no suitable address", &net.AddrError{Err: "no suitable address found", Addr: "x"}, uv.ErrNoName},
		{"expired context", context.DeadlineExceeded, uv.ErrTryAgain},
		{"cancelled context", context.Canceled, uv.ErrCanceled},
		{"anything else", errors.New("socket: too many open files"), uv.ErrFail},
	} {
		err := uv.UvtResolverError(tc.err)
		for code, other := range uv.UvtEAIErrors() {
			if got := errors.Is(err, other); got != (other == tc.want) {
				t.Errorf("%s: errors.Is(%v, %v (code %d)) = %v", tc.name, err, other, code, got)
			}
		}
		var dnsErr *uv.DNSError
		if !errors.As(err, &dnsErr) || dnsErr.Err != tc.err {
			t.Errorf("%s: the resolver's error is not kept: %+v", tc.name, dnsErr)
		}
	}
}

// fakeResolver answers every lookup with what it holds.
type fakeResolver struct {
	ips     []netip.Addr
	ipErr   error
	port    int
	portErr error
	names   []string
	nameErr error
}

func (f *fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f.ips, f.ipErr
}

func (f *fakeResolver) LookupPort(context.Context, string, string) (int, error) {
	return f.port, f.portErr
}

func (f *fakeResolver) LookupAddr(context.Context, string) ([]string, error) {
	return f.names, f.nameErr
}

// What AddrInfo makes of the resolver's answers and failures.
func TestAddrInfoGoResolver(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	stop := uv.UvtServe(t, u)
	timeout := &net.DNSError{Err: "i/o timeout", Name: "example", IsTimeout: true}
	mapped := netip.MustParseAddr("::ffff:192.0.2.1")
	for _, tc := range []struct {
		name     string
		rs       fakeResolver
		service  string
		network  string
		want     []string
		wantErr  error
		resolver error // the DNSError's Err
	}{
		{name: "IPv4-mapped answers are unmapped, repeats dropped, order kept",
			rs:   fakeResolver{ips: []netip.Addr{mapped, netip.MustParseAddr("2001:db8::1"), mapped.Unmap()}},
			want: []string{"192.0.2.1:0", "[2001:db8::1]:0"}},
		{name: "only the family asked for", network: "tcp6",
			rs: fakeResolver{ips: []netip.Addr{mapped, netip.MustParseAddr("2001:db8::1")}}, want: []string{"[2001:db8::1]:0"}},
		{name: "no address of the family", network: "tcp6",
			rs: fakeResolver{ips: []netip.Addr{mapped}}, wantErr: uv.ErrNoName},
		{name: "a service name", service: "web", rs: fakeResolver{ips: []netip.Addr{mapped}, port: 8080},
			want: []string{"192.0.2.1:8080"}},
		{name: "a timeout", rs: fakeResolver{ipErr: timeout}, wantErr: uv.ErrTryAgain, resolver: timeout},
		{name: "an unknown service", service: "web",
			rs:      fakeResolver{portErr: &net.DNSError{Err: "unknown port", Name: "tcp/web", IsNotFound: true}},
			wantErr: uv.ErrService},
		{name: "a service lookup that timed out", service: "web", rs: fakeResolver{portErr: timeout},
			wantErr: uv.ErrTryAgain, resolver: timeout},
	} {
		rs := tc.rs
		uv.UvtSetResolver(t, &rs)
		a, err := uv.NewAddrInfo(u.Reactor, "example", tc.service, uv.AddrInfoHints{Network: tc.network})
		uv.UvtMust(t, err)
		got, err := a.Await(waitCtx(t))
		var want []netip.AddrPort
		for _, s := range tc.want {
			want = append(want, netip.MustParseAddrPort(s))
		}
		if diff := cmp.Diff(want, got, cmpAddrPorts); diff != "" || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: %v, want %v (-want +got):\n%s", tc.name, err, tc.wantErr, diff)
		}
		var dnsErr *uv.DNSError
		if tc.resolver != nil && (!errors.As(err, &dnsErr) || dnsErr.Err != tc.resolver) {
			t.Errorf("%s: the resolver's error is not kept in %#v", tc.name, err)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// What NameInfo makes of the resolver's answers and failures.
func TestNameInfoGoResolver(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	stop := uv.UvtServe(t, u)
	notFound := &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}
	temporary := &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}
	for _, tc := range []struct {
		name    string
		rs      fakeResolver
		hints   uv.NameInfoHints
		want    uv.NameInfoResult
		wantErr error
	}{
		{name: "the first name, without its root dot", rs: fakeResolver{names: []string{"one.example.", "two.example."}},
			want: uv.NameInfoResult{Host: "one.example", Service: "http"}},
		{name: "no name: the address", rs: fakeResolver{nameErr: notFound},
			want: uv.NameInfoResult{Host: "192.0.2.1", Service: "http"}},
		{name: "no name but one is required", rs: fakeResolver{nameErr: notFound}, hints: uv.NameInfoHints{NameRequired: true},
			wantErr: uv.ErrNoName},
		{name: "an empty answer but a name is required", hints: uv.NameInfoHints{NameRequired: true}, wantErr: uv.ErrNoName},
		{name: "a temporary failure", rs: fakeResolver{nameErr: temporary}, wantErr: uv.ErrTryAgain},
		{name: "a permanent failure: the address", rs: fakeResolver{nameErr: errors.New("broken")},
			want: uv.NameInfoResult{Host: "192.0.2.1", Service: "http"}},
	} {
		rs := tc.rs
		uv.UvtSetResolver(t, &rs)
		n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("192.0.2.1:80"), tc.hints)
		uv.UvtMust(t, err)
		got, err := n.Await(waitCtx(t))
		if diff := cmp.Diff(tc.want, got); diff != "" || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: %v, want %v (-want +got):\n%s", tc.name, err, tc.wantErr, diff)
		}
		if err != nil && !strings.HasPrefix(err.Error(), `uv_getnameinfo "192.0.2.1:80": EAI_`) {
			t.Errorf("%s: error %q", tc.name, err)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
}

// Closing a lookup the resolver is working on: Wait and the subscriber
// hear ErrClosed at once, the resolver's context is cancelled, and nothing
// stays counted; the answer, when the resolver gives up, is dropped.
func TestDNSCloseMidflightCancels(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	b := newBlockingResolver(2)
	uv.UvtSetResolver(t, b)
	stop := uv.UvtServe(t, u)
	a, err := uv.NewAddrInfo(u.Reactor, "example", "", uv.AddrInfoHints{})
	uv.UvtMust(t, err)
	n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("192.0.2.1:80"), uv.NameInfoHints{})
	uv.UvtMust(t, err)
	var counters []*uv.UvtCounter
	lookups := []event.Event{a, n}
	for i, ev := range lookups {
		left := len(lookups) - i // in flight, this one included
		c := uv.UvtSubscribe(t, ev, u.Owner().Owned)
		counters = append(counters, c)
		uv.UvtRecv(t, b.entered, "the lookup reaching the resolver")
		if s := u.Stats(); s.Active != left {
			t.Errorf("%s in flight: active %d, want %d", ev.Info(), s.Active, left)
		}
		waited := make(chan error, 1)
		go func() {
			_, err := event.Await(waitCtx(t), event.Any(), ev)
			waited <- err
		}()
		uv.UvtMust(t, ev.Close())
		if err := uv.UvtRecv(t, waited, "Wait to return"); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Wait on %s closed in flight: %v, want ErrClosed", ev.Info(), err)
		}
		if err := uv.UvtRecv(t, b.ended, "the resolver's context to end"); !errors.Is(err, context.Canceled) {
			t.Errorf("the resolver's context ended with %v, want Canceled", err)
		}
		if !strings.HasSuffix(ev.Info(), ", closed)") {
			t.Errorf("Info of a lookup closed in flight: %q", ev.Info())
		}
		if s := u.Stats(); s.Handles["addrinfo"]+s.Handles["nameinfo"] != left-1 || s.Active != left-1 {
			t.Errorf("after closing %s: %v, active %d; want %d of each", ev.Info(), s.Handles, s.Active, left-1)
		}
	}
	stop()
	uv.UvtShutdown(t, u, false)
	// The resolvers' answers (their contexts' errors) were dropped, whether
	// they reached the loop before its Close or were refused after.
	for i, c := range counters {
		if calls := c.Calls(); len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
			t.Errorf("lookup %d: notifications %+v, want one ErrClosed", i, calls)
		}
	}
}

// lingeringResolver gives up only when its context ends and release is
// closed (by the test, from another goroutine), as a resolver does that
// takes a while to notice a cancel; it counts the lookups that returned.
type lingeringResolver struct {
	blockingResolver
	release  chan struct{}
	returned atomic.Int32
}

func (l *lingeringResolver) linger(ctx context.Context) error {
	defer l.returned.Add(1)
	err := l.wait(ctx)
	<-l.release
	return err
}

func (l *lingeringResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	return nil, l.linger(ctx)
}

func (l *lingeringResolver) LookupAddr(ctx context.Context, _ string) ([]string, error) {
	return nil, l.linger(ctx)
}

// answeringResolver answers at once and says when it has.
type answeringResolver struct {
	fakeResolver
	answered chan struct{}
}

func (a *answeringResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	defer close(a.answered)
	return a.fakeResolver.LookupNetIP(ctx, network, host)
}

// A lookup's answer is delivered on a loop turn, as libuv's callback is
// inside uv_run, never in an operation (Call, Stats, Info) run by a
// goroutine on a loop nobody runs: until a turn, the lookup is in flight.
func TestAddrInfoCompletesOnATurn(t *testing.T) {
	u := uv.UvtNewReactorOn(t, reactor.DriverGo)
	rs := &answeringResolver{fakeResolver{ips: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}, make(chan struct{})}
	uv.UvtSetResolver(t, rs)
	a, err := uv.NewAddrInfo(u.Reactor, "example", "", uv.AddrInfoHints{})
	uv.UvtMust(t, err)
	uv.UvtRecv(t, rs.answered, "the resolver's answer")
	// The answer is queued for the loop right after; operations run by this
	// goroutine, which takes the loop for each, must not complete it.
	for range 1000 {
		uv.UvtMust(t, u.Call(func() {}))
		runtime.Gosched()
	}
	if a.Flags().Has(event.Closed) || u.Stats().Handles["addrinfo"] != 1 {
		t.Errorf("completed without a loop turn: %s, %v", a.Info(), u.Stats().Handles)
	}
	uv.UvtTurnUntil(t, u, "the lookup to complete", func() bool { return a.Flags().Has(event.Closed) })
	if addrs, err := a.Await(waitCtx(t)); err != nil || len(addrs) != 1 {
		t.Errorf("Wait = %v, %v; want the one address", addrs, err)
	}
	uv.UvtShutdown(t, u, false)
}

// silentNameserver is a nameserver on 127.0.0.1 that reads every query and
// never answers; queries says when one came.
type silentNameserver struct {
	conn    net.PacketConn
	queries chan struct{}
}

func newSilentNameserver(t *testing.T) *silentNameserver {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	s := &silentNameserver{conn: c, queries: make(chan struct{}, 1024)}
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return // closed at cleanup
			}
			s.queries <- struct{}{}
		}
	}()
	t.Cleanup(func() { c.Close() })
	return s
}

// resolver is a Go resolver whose every query goes to the silent
// nameserver, over UDP (a TCP retry, were there one, would be refused).
func (s *silentNameserver) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp4", s.conn.LocalAddr().String())
	}}
}

// With lookups hung on a nameserver that never answers, more than libuv's
// pool has threads, everything else goes on, on both drivers: a literal
// address and a name from the hosts file are answered, a file request
// (libuv's pool on that driver) completes, and a hung lookup whose Context
// is cancelled frees its caller, who needs no answer the nameserver will
// never give. The reactor's Close then cancels the hung ones.
func TestDNSHungNameserverBlocksNothing(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ns := newSilentNameserver(t)
		rs := ns.resolver()
		stop := uv.UvtServe(t, u)
		defer stop()
		hung := 5
		var counters []*uv.UvtCounter
		for i := range hung {
			// Distinct names: Go's resolver asks once for lookups of one
			// name in flight together.
			a, err := uv.NewAddrInfo(u.Reactor, fmt.Sprintf("hung%d.invalid.", i), "", uv.AddrInfoHints{Network: "ip4", Resolver: rs})
			uv.UvtMust(t, err)
			counters = append(counters, uv.UvtSubscribe(t, a, u.Owner().Owned))
		}
		for range hung {
			uv.UvtRecv(t, ns.queries, "a query reaching the silent nameserver")
		}

		ctx := waitCtx(t)
		for _, host := range []string{"127.0.0.1", "localhost"} {
			a, err := uv.NewAddrInfo(u.Reactor, host, "80", uv.AddrInfoHints{Network: "tcp4", Resolver: rs})
			uv.UvtMust(t, err)
			if addrs, err := a.Await(ctx); err != nil || len(addrs) == 0 {
				t.Errorf("%s with %d lookups hung: %v, %v", host, hung, addrs, err)
			}
		}
		n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{NumericHost: true, Resolver: rs})
		uv.UvtMust(t, err)
		if res, err := n.Await(ctx); err != nil || res.Host != "127.0.0.1" {
			t.Errorf("NameInfo with %d lookups hung: %+v, %v", hung, res, err)
		}
		st, err := uv.Stat(ctx, u.Reactor, t.TempDir())
		uv.UvtMust(t, err)
		if fi, err := st.Await(ctx); err != nil || !fi.IsDir() {
			t.Errorf("Stat with %d lookups hung: %v, %v", hung, fi, err)
		}

		// A hung lookup whose Context ends completes with the Context's
		// error: nothing else could end it.
		lctx, cancel := context.WithCancel(context.Background())
		a, err := uv.NewAddrInfo(u.Reactor, "cancelled.invalid.", "", uv.AddrInfoHints{Network: "ip4", Resolver: rs, Context: lctx})
		uv.UvtMust(t, err)
		uv.UvtRecv(t, ns.queries, "its query reaching the silent nameserver")
		cancel()
		if addrs, err := a.Await(ctx); !errors.Is(err, context.Canceled) || !errors.Is(err, uv.ErrCanceled) {
			t.Errorf("hung lookup whose Context was cancelled: %v, %v; want context.Canceled, EAI_CANCELED", addrs, err)
		}
		if got := u.Stats().Handles["addrinfo"]; got != hung {
			t.Errorf("%d lookups counted, want the %d hung", got, hung)
		}
		stop()
		uv.UvtShutdown(t, u, false)
		for i, c := range counters {
			if calls := c.Calls(); len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
				t.Errorf("hung lookup %d: %+v, want one ErrClosed from the reactor's Close", i, calls)
			}
		}
	})
}

// The reactor's Close cancels the lookups in flight and returns without
// waiting for the resolver, on both drivers: one that ignores its
// cancelled context (a getaddrinfo thread stuck on a nameserver, a Dial
// of the caller's that never returns) keeps only its goroutine, and its
// answer, when it comes, is dropped. Here the resolvers return only after
// Close has, so a Close that waited for them would never return.
func TestDNSCloseLeavesStuckResolvers(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const n = 4
		l := &lingeringResolver{blockingResolver: *newBlockingResolver(n), release: make(chan struct{})}
		uv.UvtSetResolver(t, l)
		counters := startLookups(t, u, n, "example", netip.MustParseAddrPort("127.0.0.1:80"), l.entered)
		uv.UvtShutdown(t, u, false)
		if got := l.returned.Load(); got != 0 {
			t.Errorf("%d of %d stuck resolvers returned before the reactor's Close did", got, n)
		}
		for range n {
			if err := uv.UvtRecv(t, l.ended, "a lookup's context ending"); !errors.Is(err, context.Canceled) {
				t.Errorf("a lookup's context ended with %v, want Canceled", err)
			}
		}
		close(l.release)
		uv.UvtWaitFor(t, "the stuck resolvers to return", func() bool { return l.returned.Load() == n })
		checkEachClosed(t, counters) // never the late answer
	})
}

// TestAddrInfoInvalidNameRefused: a host that is neither an address nor
// a host name in RFC 1123's syntax (an empty label, a hyphen first or last
// in a label, a byte other than a letter, a digit, a hyphen or an
// underscore, a label over 63 bytes, a last label of digits only, a name
// over 253, a trailing dot aside) is refused at once by NewAddrInfo, Dial (a Dialer whose resolver
// fails the test if asked), DialAsync and Listen, with an error matching
// syscall.EINVAL that names the host; the errors' texts are the same on
// both drivers, and nothing is looked up. (The libuv driver's getaddrinfo
// said EINVAL later for some, Go's resolver EAI_NONAME for them.) Names at
// the limits, with an underscore, and literals are looked up.
func TestAddrInfoInvalidNameRefused(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".") // 253 bytes
	bad := []string{
		name253 + "c",                    // 254 bytes
		name253 + "c.",                   // 254 bytes and the root's dot
		strings.Repeat("a", 300),         // one label of 300 bytes
		"x." + label63 + "a.example",     // a label of 64
		label63 + "a",                    // a label of 64, alone
		strings.Repeat("a.", 127) + "aa", // 256 bytes of short labels
		"a..b", ".a", "a.b..", ".", "..", // empty labels
		"-x", "x-", "a.-b.c", "a.b-.c", "-", // a hyphen first or last
		"a b", "a/b", "a:b:c:", "bücher.example", "a@b", "x.y*", "%", // bytes no host name has
		"1.2.3.4.5", "a.123", "127.0.0.256", "0x7f.1.2.3.4", // a numeric last label, and no address
	}
	errs := map[reactor.Driver][]string{}
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		asked := make(chan string, 4*len(bad))
		d := &uv.Dialer{Reactor: u.Reactor, Resolver: &net.Resolver{PreferGo: true, Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			asked <- addr
			return nil, errors.New("no nameserver here")
		}}}
		for _, host := range bad {
			a, err := uv.NewAddrInfo(u.Reactor, host, "", uv.AddrInfoHints{})
			if a != nil || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), fmt.Sprintf("%q", host)) {
				t.Errorf("NewAddrInfo(%q) = %v, %v; want EINVAL naming the host", host, a, err)
			}
			errs[u.Driver()] = append(errs[u.Driver()], fmt.Sprint(err))
			address := net.JoinHostPort(host, "80")
			c, err := d.DialIO(waitCtx(t), "tcp", address)
			if c != nil || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), fmt.Sprintf("%q", host)) {
				t.Errorf("Dial(%q) = %v, %v; want EINVAL naming the host", address, c, err)
			}
			errs[u.Driver()] = append(errs[u.Driver()], fmt.Sprint(err))
			f, err := uv.DialAsync(u.Reactor, "tcp", address)
			if f != nil || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), fmt.Sprintf("%q", host)) {
				t.Errorf("DialAsync(%q) = %v, %v; want EINVAL naming the host", address, f, err)
			}
			errs[u.Driver()] = append(errs[u.Driver()], fmt.Sprint(err))
			ln, err := uv.Listen(u.Reactor, "tcp", net.JoinHostPort(host, "0"))
			if ln != nil || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), fmt.Sprintf("%q", host)) {
				t.Errorf("Listen(%q) = %v, %v; want EINVAL naming the host", host, ln, err)
			}
			errs[u.Driver()] = append(errs[u.Driver()], fmt.Sprint(err))
		}
		if len(asked) > 0 {
			t.Errorf("the Dialer's resolver was asked %d times (first %q) for names refused", len(asked), <-asked)
		}
		if s := u.Stats(); len(s.Handles) != 0 || s.Active != 0 {
			t.Errorf("refused lookups left %v, active %d", s.Handles, s.Active)
		}
		for _, host := range []string{name253, name253 + ".", "a-b.c0", "0a", "_sip._tcp.example", "my_app_1", "123.a", "127.0.0.1", "::1", "127.1", "fe80::1%1"} {
			a, err := uv.NewAddrInfo(u.Reactor, host, "", uv.AddrInfoHints{})
			if err != nil {
				t.Errorf("NewAddrInfo(%q) = %v, want a lookup", host, err)
				continue
			}
			uv.UvtMust(t, a.Close())
		}
		uv.UvtShutdown(t, u, false)
	})
	if len(errs) == len(conform.Drivers) {
		if diff := cmp.Diff(errs[reactor.DriverLibuv], errs[reactor.DriverGo]); diff != "" {
			t.Errorf("refusals differ between the drivers (-libuv +go):\n%s", diff)
		}
	}
}

// startLookups starts n lookups on u, an AddrInfo of host and a NameInfo
// of addr in turn, each counted, and waits until each has reached the
// resolver (entered).
func startLookups(t *testing.T, u *uv.UvtReactor, n int, host string, addr netip.AddrPort, entered chan struct{}) []*uv.UvtCounter {
	t.Helper()
	var counters []*uv.UvtCounter
	for i := range n {
		var ev event.Event
		var err error
		if i%2 == 0 {
			ev, err = uv.NewAddrInfo(u.Reactor, host, "", uv.AddrInfoHints{})
		} else {
			ev, err = uv.NewNameInfo(u.Reactor, addr, uv.NameInfoHints{})
		}
		uv.UvtMust(t, err)
		counters = append(counters, uv.UvtSubscribe(t, ev, u.Owner().Owned))
	}
	for range n {
		uv.UvtRecv(t, entered, "a lookup reaching the resolver")
	}
	return counters
}

// checkEachClosed checks that each lookup heard ErrClosed, once.
func checkEachClosed(t *testing.T, counters []*uv.UvtCounter) {
	t.Helper()
	for i, c := range counters {
		if calls := c.Calls(); len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
			t.Errorf("lookup %d: %+v, want one ErrClosed", i, calls)
		}
	}
}
