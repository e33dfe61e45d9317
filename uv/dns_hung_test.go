package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

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
		var counters []*uv.UvtCounter
		for i := range n {
			var ev event.Event
			var err error
			if i%2 == 0 {
				ev, err = uv.NewAddrInfo(u.Reactor, "example", "", uv.AddrInfoHints{})
			} else {
				ev, err = uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
			}
			uv.UvtMust(t, err)
			counters = append(counters, uv.UvtSubscribe(t, ev, u.Owner().Owned))
			uv.UvtRecv(t, l.entered, "a lookup reaching the resolver")
		}
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
		for i, c := range counters {
			if calls := c.Calls(); len(calls) != 1 || !errors.Is(calls[0].Err, event.ErrClosed) {
				t.Errorf("lookup %d: %+v, want one ErrClosed, never the late answer", i, calls)
			}
		}
	})
}
