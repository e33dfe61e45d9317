package uv_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// errSeen is what one failure gave: its text (addresses and the test's
// directory written ADDR and DIR) and the errno it matches.
type errSeen struct {
	Text  string
	Errno syscall.Errno
}

// errSeenOf is err as errSeen, the strings old of each pair of repl
// written as the new.
func errSeenOf(err error, repl ...string) errSeen {
	s := errSeen{Text: "<nil>"}
	if err != nil {
		s.Text = strings.NewReplacer(repl...).Replace(err.Error())
	}
	errors.As(err, &s.Errno)
	return s
}

// addrs is the replacement pairs writing each of the addresses as ADDR.
func addrs(as ...net.Addr) []string {
	var pairs []string
	for _, a := range as {
		pairs = append(pairs, a.String(), "ADDR")
	}
	return pairs
}

// failing is one way to connect and to dial, so that the same failures
// are made through uv's IO and through package net.
type failing struct {
	pair  func(t *testing.T) (client, server net.Conn)
	abort func(c net.Conn) error // Close is to reset the connection
	dial  func(addr string) error
}

// netFailures makes the common failures of a network program: a read of
// a connection its peer reset, a write to a connection its peer closed
// (once the peer's end has come: the write is answered with a reset, and
// the next fails), and a dial of a port nobody listens on.
func netFailures(t *testing.T, f failing) map[string]errSeen {
	out := map[string]errSeen{}
	c, s := f.pair(t)
	uv.UvtMust(t, f.abort(c))
	uv.UvtMust(t, c.Close())
	_, err := s.Read(make([]byte, 10))
	out["read reset"] = errSeenOf(err, addrs(s.LocalAddr(), s.RemoteAddr())...)
	s.Close()

	c, s = f.pair(t)
	uv.UvtMust(t, s.Close())
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read of a connection its peer closed = %v, want io.EOF", err)
	}
	for range 100 {
		if _, err = c.Write([]byte("x")); err != nil {
			break
		}
	}
	out["write closed"] = errSeenOf(err, addrs(c.LocalAddr(), c.RemoteAddr())...)
	c.Close()

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	addr := ln.Addr().String()
	ln.Close() // the port is free: nobody listens there
	out["dial refused"] = errSeenOf(f.dial(addr), addr, "ADDR")
	return out
}

// TestErrorTextsAcrossDrivers: the common failures give the same error
// on both drivers, the text package net prints for them (a reset read, a
// write after the peer closed, a refused dial, over "tcp4", which the
// errors name as net's do: "read tcp4 ADDR->ADDR:
// read: connection reset by peer", ...) and the same errno; a failed file
// request, the text docs/kinds.md gives ("open DIR/missing: uv_fs_open:
// ENOENT (no such file or directory)").
func TestErrorTextsAcrossDrivers(t *testing.T) {
	std := netFailures(t, failing{
		pair: func(t *testing.T) (net.Conn, net.Conn) {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			defer ln.Close()
			c, err := net.Dial("tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			s, err := ln.Accept()
			uv.UvtMust(t, err)
			return c, s
		},
		abort: func(c net.Conn) error { return c.(*net.TCPConn).SetLinger(0) },
		dial:  func(addr string) error { _, err := net.Dial("tcp4", addr); return err },
	})
	seen := map[reactor.Driver]map[string]errSeen{}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		v := newIOEnv(t, d, "tcp4")
		got := netFailures(t, failing{
			pair: func(t *testing.T) (net.Conn, net.Conn) {
				c, s := v.pair(t)
				return c, s
			},
			abort: func(c net.Conn) error { return c.(*uv.IO).SetLinger(0) },
			dial: func(addr string) error {
				_, err := uv.Dial(context.Background(), v.u.Reactor, "tcp4", addr)
				return err
			},
		})
		if diff := cmp.Diff(std, got); diff != "" {
			t.Errorf("the failures differ from package net's (-net +uv):\n%s", diff)
		}
		dir := t.TempDir()
		_, err := uv.OpenFile(context.Background(), v.u.Reactor, filepath.Join(dir, "missing"), os.O_RDONLY, 0)
		got["open missing"] = errSeenOf(err, dir, "DIR")
		want := errSeen{"open DIR/missing: uv_fs_open: ENOENT (no such file or directory)", syscall.ENOENT}
		if diff := cmp.Diff(want, got["open missing"]); diff != "" {
			t.Errorf("the failed open (-want +got):\n%s", diff)
		}
		seen[d] = got
		v.finish(t)
	})
	if len(seen) < 2 {
		t.Logf("%d driver in this build (no cgo): the driver is held to package net's texts, not compared with another", len(seen))
		return
	}
	if diff := cmp.Diff(seen[reactor.DriverLibuv], seen[reactor.DriverGo]); diff != "" {
		t.Errorf("the same failures differ between the drivers (-libuv +go):\n%s", diff)
	}
}
