package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Descriptor exhaustion: with RLIMIT_NOFILE lowered and every descriptor
// taken, accept, dial, open and watch each fail with an error matching
// syscall.EMFILE, and a connection made before keeps being served. It runs
// in a child process (this test binary again), so that the lowered limit
// touches nothing else.
func TestFaultDescriptorExhaustion(t *testing.T) {
	if inChild(t, "UVEVENT_EMFILE_CHILD") {
		emfileChild(t)
	}
}

func emfileChild(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer ln.Close()
		// A served connection, made before the descriptors run out: an echo.
		client, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer client.Close()
		srv, err := ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		defer srv.Close()
		echo := func() error {
			if _, err := client.Write([]byte("ping")); err != nil {
				return err
			}
			b := make([]byte, 4)
			if _, err := io.ReadFull(srv, b); err != nil {
				return err
			}
			_, err := srv.Write(b)
			if err == nil {
				_, err = io.ReadFull(client, b)
			}
			return err
		}
		uv.UvtMust(t, echo())

		// Take every descriptor left under a low limit.
		var old syscall.Rlimit
		uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
		lim := old
		lim.Cur = uint64(uv.UvtOpenFDs(t) + 16)
		uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
		defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		var hog []int
		for {
			fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				break
			}
			hog = append(hog, fd)
		}
		release := func() {
			for _, fd := range hog {
				syscall.Close(fd)
			}
			hog = nil
		}
		defer release()

		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := uv.Dial(ctx, u.Reactor, "tcp4", ln.Addr().String()); !errors.Is(err, syscall.EMFILE) {
			t.Errorf("Dial with no descriptor left = %v, want EMFILE", err)
		}
		if _, err := uv.OpenFile(ctx, u.Reactor, "/dev/null", os.O_RDONLY, 0); !errors.Is(err, syscall.EMFILE) {
			t.Errorf("OpenFile with no descriptor left = %v, want EMFILE", err)
		}
		if w, err := uv.NewFSEvent(u.Reactor, t.TempDir(), uv.FSEventOptions{}); err == nil {
			if err := w.Start(); !errors.Is(err, syscall.EMFILE) {
				t.Errorf("FSEvent Start with no descriptor left = %v, want EMFILE", err)
			}
			w.Close()
		} else if !errors.Is(err, syscall.EMFILE) {
			t.Errorf("NewFSEvent with no descriptor left = %v, want EMFILE", err)
		}
		// A connection from the last descriptor: the server has none left
		// to accept it with.
		syscall.Close(hog[len(hog)-1])
		hog = hog[:len(hog)-1]
		waiting, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		defer waiting.Close()
		actx, acancel := context.WithTimeout(ctx, 200e6) // an accept that cannot get its descriptor fails or waits; either way it ends
		c, err := ln.AcceptIO(actx)
		acancel()
		switch {
		case err == nil:
			c.Close()
			t.Errorf("AcceptIO with no descriptor left succeeded")
		case errors.Is(err, syscall.EMFILE), errors.Is(err, context.DeadlineExceeded):
			t.Logf("AcceptIO with no descriptor left: %v", err)
		default:
			t.Errorf("AcceptIO with no descriptor left = %v, want EMFILE", err)
		}
		// The connection made before is still served.
		if err := echo(); err != nil {
			t.Errorf("the served connection, out of descriptors: %v", err)
		}
		release()
		if err := echo(); err != nil {
			t.Errorf("the served connection, descriptors back: %v", err)
		}
	})
}
