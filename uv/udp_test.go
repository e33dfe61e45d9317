//go:build cgo

package uv_test

import (
	"errors"
	"net"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// udpPair serves a new reactor and opens two UDP sockets on network's
// loopback; finish closes them and checks the reactor shuts down clean.
func udpPair(t *testing.T, network string) (u *uv.UvtReactor, a, b *uv.UDP, finish func()) {
	t.Helper()
	u = uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	addr := "127.0.0.1:0"
	if network == "udp6" {
		addr = "[::1]:0"
	}
	a, err := uv.ListenUDP(u.Reactor, network, addr)
	uv.UvtMust(t, err)
	b, err = uv.ListenUDP(u.Reactor, network, addr)
	uv.UvtMust(t, err)
	return u, a, b, func() {
		a.Close()
		b.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	}
}

// TestUDPRoundTrip sends a datagram each way through ReadFrom and WriteTo:
// the bytes arrive whole, with the sender's address.
func TestUDPRoundTrip(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			_, a, b, finish := udpPair(t, network)
			if _, err := a.WriteTo([]byte("ping"), b.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, from, err := b.ReadFrom(buf)
			if err != nil || string(buf[:n]) != "ping" || from.String() != a.LocalAddr().String() {
				t.Fatalf("ReadFrom = %q from %v, %v; want ping from %v", buf[:n], from, err, a.LocalAddr())
			}
			if _, err := b.WriteTo([]byte("pong"), from); err != nil {
				t.Fatal(err)
			}
			n, from, err = a.ReadFrom(buf)
			if err != nil || string(buf[:n]) != "pong" || from.String() != b.LocalAddr().String() {
				t.Errorf("reply = %q from %v, %v", buf[:n], from, err)
			}
			re := regexp.MustCompile(`^UDP\(` + network + ` \S+, in=1, out=1, dropped=0\)$`)
			if !re.MatchString(a.Info()) {
				t.Errorf("Info = %q, want %s", a.Info(), re)
			}
			finish()
		})
	}
}

// TestUDPCallbacks: a started UDP notifies each datagram, its bytes a view
// valid during the callback.
func TestUDPCallbacks(t *testing.T) {
	_, a, b, finish := udpPair(t, "udp4")
	type got struct {
		Data string
		From string
	}
	ch := make(chan got, 3)
	_, err := event.Subscribe(b, func(_ event.Event, res any, err error) {
		d, ok := res.(*uv.Datagram)
		if !ok {
			return // the close
		}
		ch <- got{string(d.Data), d.Addr.String()} // copied: the view ends with the callback
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, b.Start())
	var want []got
	for _, m := range []string{"one", "two", "three"} {
		if _, err := a.WriteTo([]byte(m), b.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		want = append(want, got{m, a.LocalAddr().String()})
	}
	var all []got
	for range want {
		all = append(all, uv.UvtRecv(t, ch, "datagram"))
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("datagrams (-want +got):\n%s", diff)
	}
	finish()
}

// TestUDPDeadlineAndClose: a ReadFrom past its deadline fails with a
// timeout; one waiting at Close fails with ErrClosed.
func TestUDPDeadlineAndClose(t *testing.T) {
	u, a, b, finish := udpPair(t, "udp4")
	uv.UvtMust(t, a.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, _, err := a.ReadFrom(make([]byte, 10))
	checkTimeout(t, "ReadFrom", err)
	uv.UvtMust(t, a.SetReadDeadline(time.Time{}))
	errs := make(chan error, 1)
	go func() {
		_, _, err := a.ReadFrom(make([]byte, 10))
		errs <- err
	}()
	uv.UvtWaitFor(t, "ReadFrom to wait", func() bool { return event.LoopRefs(a) == 0 && u.Stats().Active > 0 })
	uv.UvtMust(t, a.Close())
	if err := uv.UvtRecv(t, errs, "ReadFrom's end"); !errors.Is(err, net.ErrClosed) {
		t.Errorf("ReadFrom waiting at Close = %v, want ErrClosed", err)
	}
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after Close = %v", err)
	}
	if _, err := b.WriteTo([]byte("x"), &net.TCPAddr{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("WriteTo a TCP address = %v, want EINVAL", err)
	}
	for _, tc := range []struct{ network, addr string }{{"tcp", "127.0.0.1:0"}, {"udp4", "[::1]:0"}, {"udp", "nonsense"}} {
		if x, err := uv.ListenUDP(u.Reactor, tc.network, tc.addr); err == nil {
			t.Errorf("ListenUDP(%q, %q) succeeded", tc.network, tc.addr)
			x.Close()
		}
	}
	finish()
}

func TestConformUDP(t *testing.T) {
	sender, err := net.ListenPacket("udp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer sender.Close()
	conform.Run(t, conform.Kind{
		NeedsLibuv: true,
		Name:       "udp",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.ListenUDP(r, "udp4", "127.0.0.1:0")
		},
		Fire: func(ev event.Event) error {
			_, err := sender.WriteTo([]byte("x"), ev.(*uv.UDP).LocalAddr())
			return err
		},
		Info: regexp.MustCompile(`^UDP\(udp4 127\.0\.0\.1:\d+, in=\d+, out=\d+, dropped=\d+\)$`),
	})
}
