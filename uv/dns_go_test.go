package uv_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

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
