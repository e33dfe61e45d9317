package uv

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// keepAlive is a socket's keep-alive options as the kernel reports them.
type keepAlive struct {
	On                    int
	Idle, Interval, Count int // seconds, seconds, probes
}

// keepAliveOf reads the IO's keep-alive options from its descriptor.
func keepAliveOf(t *testing.T, c *IO) keepAlive {
	t.Helper()
	fd := fdOf(t, c)
	get := func(level, opt int) int {
		v, err := unix.GetsockoptInt(fd, level, opt)
		UvtMust(t, err)
		return v
	}
	return keepAlive{
		On:       get(unix.SOL_SOCKET, unix.SO_KEEPALIVE),
		Idle:     get(unix.IPPROTO_TCP, tcpKeepIdle),
		Interval: get(unix.IPPROTO_TCP, unix.TCP_KEEPINTVL),
		Count:    get(unix.IPPROTO_TCP, unix.TCP_KEEPCNT),
	}
}

// TestTCPKeepAliveConfig: SetKeepAliveConfig sets the idle delay, the
// interval and the count of keep-alive probes, as net.TCPConn's does, on
// both drivers (libuv's uv_tcp_keepalive sets the delay only): durations
// are rounded up to whole seconds, zero fields take net's defaults (15 s,
// 15 s, 9), negative ones leave the option as it was; SetKeepAlive turns
// the probes on or off and leaves the rest; a Unix socket refuses it.
func TestTCPKeepAliveConfig(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		stop := UvtServe(t, u)
		ln, c, s := tcpPairOn(t, u)

		before := keepAliveOf(t, c)
		if before.On != 0 {
			t.Errorf("a dialled connection has SO_KEEPALIVE = %d, want 0 (off until asked, as in libuv)", before.On)
		}
		steps := []struct {
			name string
			set  func() error
			want keepAlive
		}{
			{"all fields", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 4})
			}, keepAlive{1, 30, 5, 4}},
			{"rounded up", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 1500 * time.Millisecond, Interval: time.Nanosecond, Count: 3})
			}, keepAlive{1, 2, 1, 3}},
			{"negative leaves as it was", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: -1, Interval: 7 * time.Second, Count: -1})
			}, keepAlive{1, 2, 7, 3}},
			{"zero takes net's defaults", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true})
			}, keepAlive{1, 15, 15, 9}},
			{"off keeps the rest", func() error { return c.SetKeepAlive(false) }, keepAlive{0, 15, 15, 9}},
			{"on again keeps the rest", func() error { return c.SetKeepAlive(true) }, keepAlive{1, 15, 15, 9}},
			{"disabled with options", func() error {
				return c.SetKeepAliveConfig(net.KeepAliveConfig{Idle: 60 * time.Second, Interval: -1, Count: 2})
			}, keepAlive{0, 60, 15, 2}},
		}
		for _, st := range steps {
			if err := st.set(); err != nil {
				t.Errorf("%s: %v", st.name, err)
				continue
			}
			if diff := cmp.Diff(st.want, keepAliveOf(t, c)); diff != "" {
				t.Errorf("%s: keep-alive options (-want +got):\n%s", st.name, diff)
			}
		}
		// The accepted end is set the same way.
		UvtMust(t, s.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 2 * time.Second, Count: 5}))
		if diff := cmp.Diff(keepAlive{1, 10, 2, 5}, keepAliveOf(t, s)); diff != "" {
			t.Errorf("accepted end (-want +got):\n%s", diff)
		}
		// A value the kernel refuses is its error.
		if err := c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Count: 1 << 20}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Count 1<<20: %v, want EINVAL", err)
		}
		c.Close()
		if err := c.SetKeepAlive(true); !errors.Is(err, ErrClosed) {
			t.Errorf("SetKeepAlive after Close: %v, want ErrClosed", err)
		}
		s.Close()
		ln.Close()

		a, b, err := Pipe(u.Reactor)
		UvtMust(t, err)
		if err := a.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SetKeepAliveConfig on a Unix socket: %v, want EINVAL", err)
		}
		a.Close()
		b.Close()
		stop()
		UvtShutdown(t, u, false)
	})
}
