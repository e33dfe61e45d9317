package uv_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// dualNameserver is a nameserver on 127.0.0.1 that gives every name ::1
// (AAAA) and 127.0.0.1 (A): the dual-stack answer /etc/hosts here does
// not give localhost. asked counts the queries.
type dualNameserver struct {
	conn  net.PacketConn
	asked atomic.Int32
}

func newDualNameserver(t *testing.T) *dualNameserver {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	s := &dualNameserver{conn: c}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return // closed at cleanup
			}
			s.asked.Add(1)
			if resp := dualAnswer(buf[:n]); resp != nil {
				c.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { c.Close() })
	return s
}

// dualAnswer answers a query for an A or AAAA record with the loopback
// address of that family (other types get no record).
func dualAnswer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, the type and the class
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	var rdata []byte
	switch qtype {
	case 1:
		rdata = []byte{127, 0, 0, 1}
	case 28:
		a := netip.IPv6Loopback().As16()
		rdata = a[:]
	}
	resp := append([]byte{}, q[:end]...)
	binary.BigEndian.PutUint16(resp[2:], 0x8180) // a response, recursion available, no error
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	if rdata == nil {
		binary.BigEndian.PutUint16(resp[6:], 0)
		return resp
	}
	binary.BigEndian.PutUint16(resp[6:], 1)
	rr := []byte{0xc0, 12, 0, byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(len(rdata))}
	return append(append(resp, rr...), rdata...)
}

// nameserverResolver is a Go resolver whose every query goes to addr, and
// that counts the connections it makes.
func nameserverResolver(addr net.Addr, dials *atomic.Int32) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "udp4", addr.String())
	}}
}

// listenOn listens on one loopback address only and accepts every
// connection, until the test ends.
func listenOn(t *testing.T, network, addr string) int {
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// A name with an IPv6 and an IPv4 address connects whichever of them
// listens: every address the resolver gives is tried, each family in
// its turn (with a fallback delay, or at once when the first family has
// failed), whatever the resolver's order.
func TestDialerTriesEveryAddress(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ns := newDualNameserver(t)
		var dials atomic.Int32
		stop := uv.UvtServe(t, u)
		defer stop()
		for _, only := range []struct{ network, addr, want string }{
			{"tcp4", "127.0.0.1:0", "127.0.0.1"},
			{"tcp6", "[::1]:0", "::1"},
		} {
			port := listenOn(t, only.network, only.addr)
			for _, delay := range []time.Duration{0, time.Hour, -1} {
				d := uv.Dialer{Reactor: u.Reactor, Resolver: nameserverResolver(ns.conn.LocalAddr(), &dials), FallbackDelay: delay}
				c, err := d.DialContext(waitCtx(t), "tcp", net.JoinHostPort("dual.test.", strconv.Itoa(port)))
				if err != nil {
					t.Errorf("only %s listens, fallback delay %v: %v", only.want, delay, err)
					continue
				}
				if got := c.RemoteAddr().(*net.TCPAddr).IP.String(); got != only.want {
					t.Errorf("only %s listens: connected to %s", only.want, got)
				}
				c.Close()
			}
		}
		if dials.Load() == 0 {
			t.Errorf("the name never reached the resolver")
		}
		// tcp4 and tcp6 take only their family's address.
		port := listenOn(t, "tcp6", "[::1]:0")
		d := uv.Dialer{Reactor: u.Reactor, Resolver: nameserverResolver(ns.conn.LocalAddr(), &dials)}
		if c, err := d.DialContext(waitCtx(t), "tcp4", net.JoinHostPort("dual.test.", strconv.Itoa(port))); err == nil {
			t.Errorf("tcp4 connected to %v, where only ::1 listens", c.RemoteAddr())
			c.Close()
		}
		c, err := d.DialContext(waitCtx(t), "tcp6", net.JoinHostPort("dual.test.", strconv.Itoa(port)))
		uv.UvtMust(t, err)
		c.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A literal address is never sent to a resolver, and a name is resolved
// within the dial's context: a resolver hung on a nameserver that never
// answers gives way when the context ends, and so does a Dialer's Timeout.
func TestDialerResolvesOnlyNamesWithinContext(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		ns := newSilentNameserver(t)
		var dials atomic.Int32
		rs := nameserverResolver(ns.conn.LocalAddr(), &dials)
		stop := uv.UvtServe(t, u)
		defer stop()
		port4, port6 := listenOn(t, "tcp4", "127.0.0.1:0"), listenOn(t, "tcp6", "[::1]:0")
		d := uv.Dialer{Reactor: u.Reactor, Resolver: rs}
		for _, addr := range []string{"127.0.0.1:" + strconv.Itoa(port4), "[::1]:" + strconv.Itoa(port6)} {
			c, err := d.DialContext(waitCtx(t), "tcp", addr)
			if err != nil {
				t.Errorf("dial %s: %v", addr, err)
				continue
			}
			c.Close()
		}
		if n := dials.Load(); n != 0 {
			t.Errorf("literal addresses reached the resolver %d times", n)
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := d.DialContext(ctx, "tcp", "hung.invalid.:80")
			done <- err
		}()
		uv.UvtRecv(t, ns.queries, "the name's query reaching the silent nameserver")
		cancel()
		if err := uv.UvtRecv(t, done, "the dial to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("dial of a hung name whose context was cancelled: %v, want context.Canceled", err)
		}
		d.Timeout = time.Millisecond
		if _, err := d.DialContext(waitCtx(t), "tcp", "hung2.invalid.:80"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("dial of a hung name past the Dialer's Timeout: %v, want context.DeadlineExceeded", err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
