package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// TestIPCSendIOEnds: as SendIO's doc says, an end of Pipe (a socket pair)
// is passed and arrives as an IO that carries bytes to the other end, and
// a terminal (OpenTTY) is refused with EINVAL, on both drivers.
func TestIPCSendIOEnds(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		fds, err := uv.UvtSocketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		uv.UvtMust(t, err)
		tx, err := uv.OpenIPC(u.Reactor, fds[0])
		uv.UvtMust(t, err)
		rx, err := uv.OpenIPC(u.Reactor, fds[1])
		uv.UvtMust(t, err)
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		if err := tx.SendIO(ctx, a); err != nil {
			t.Fatalf("SendIO(an end of Pipe) = %v, want nil", err)
		}
		p, err := rx.Receive(ctx)
		uv.UvtMust(t, err)
		if p.IO == nil {
			t.Fatalf("Receive = %+v, want an IO", p)
		}
		if _, err := p.IO.Write([]byte("x")); err != nil {
			t.Fatalf("Write on the passed end: %v", err)
		}
		buf := make([]byte, 1)
		if n, err := b.Read(buf); err != nil || n != 1 || buf[0] != 'x' {
			t.Errorf("Read from the other end = %d %q %v, want 1 \"x\"", n, buf[:n], err)
		}
		_, pts := openPTY(t)
		tty, err := uv.OpenTTY(u.Reactor, int(pts.Fd()))
		if err != nil {
			t.Fatalf("OpenTTY: %v", err)
		}
		if err := tx.SendIO(ctx, tty); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("SendIO(a terminal) = %v, want EINVAL", err)
		}
		tty.Close()
		p.Close()
		a.Close()
		b.Close()
		tx.Close()
		rx.Close()
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
