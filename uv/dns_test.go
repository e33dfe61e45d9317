package uv_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Lookups of localhost, of names in /etc/hosts and of literal addresses
// only, on both drivers: nothing here needs a network or a DNS server.
// Names that are not found are ones no resolver sends a query for
// ("bad..name" has an empty label). The pure-Go driver's mapping of
// resolver failures is checked with fake resolvers (dns_go_test.go).

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
			{"a name that is not found", "bad..name", "", uv.AddrInfoHints{}, uv.ErrNoName},
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
		var counters []*uv.UvtCounter
		for i := range n {
			var ev event.Event
			var err error
			if i%2 == 0 {
				ev, err = uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
			} else {
				ev, err = uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:22"), uv.NameInfoHints{})
			}
			uv.UvtMust(t, err)
			counters = append(counters, uv.UvtSubscribe(t, ev, u.Owner().Owned))
		}
		for range n {
			uv.UvtRecv(t, blocked.entered, "a lookup reaching the resolver")
		}
		uv.UvtShutdown(t, u, false)
		for i, c := range counters {
			if calls := c.Calls(); len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
				t.Errorf("lookup %d: %+v, want one ErrClosed", i, calls)
			}
		}
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
