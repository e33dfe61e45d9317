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

// setupFailures makes what fails as a program sets up on u: a listen and
// a UDP bind on an address in use (the texts held to package net's), a
// poll of a descriptor that is not open, a watch and a spawn of missing
// paths (dir the test's directory).
func setupFailures(t *testing.T, u *uv.UvtReactor, dir string) map[string]errSeen {
	out := map[string]errSeen{}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer ln.Close()
	_, err = uv.Listen(u.Reactor, "tcp4", ln.Addr().String())
	out["listen in use"] = errSeenOf(err, addrs(ln.Addr())...)
	_, stdErr := net.Listen("tcp4", ln.Addr().String())
	if diff := cmp.Diff(errSeenOf(stdErr, addrs(ln.Addr())...), out["listen in use"]); diff != "" {
		t.Errorf("a listen on an address in use (-net +uv):\n%s", diff)
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer pc.Close()
	_, err = uv.ListenUDP(u.Reactor, "udp4", pc.LocalAddr().String())
	out["udp in use"] = errSeenOf(err, addrs(pc.LocalAddr())...)
	_, stdErr = net.ListenPacket("udp4", pc.LocalAddr().String())
	if diff := cmp.Diff(errSeenOf(stdErr, addrs(pc.LocalAddr())...), out["udp in use"]); diff != "" {
		t.Errorf("a UDP bind on an address in use (-net +uv):\n%s", diff)
	}
	_, err = uv.NewPoll(u.Reactor, 1<<30, uv.Readable, uv.PollOptions{}) // no descriptor has it
	out["poll not open"] = errSeenOf(err)
	w, err := uv.NewFSEvent(u.Reactor, filepath.Join(dir, "missing"), uv.FSEventOptions{})
	if err == nil {
		err = w.Start()
	}
	out["watch missing"] = errSeenOf(err, dir, "DIR")
	_, err = uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{filepath.Join(dir, "missing")}})
	out["spawn missing"] = errSeenOf(err, dir, "DIR")
	return out
}

// TestErrorTextsAcrossDrivers: the common failures give the same error
// on both drivers, the text package net prints for them (a reset read, a
// write after the peer closed, a refused dial, over "tcp4", which the
// errors name as net's do: "read tcp4 ADDR->ADDR:
// read: connection reset by peer", ...) and the same errno; a failed file
// request, the text docs/kinds.md gives ("open DIR/missing: uv_fs_open:
// ENOENT (no such file or directory)"). What fails in setting up (a listen,
// a UDP bind, a poll, a watch, a spawn) says the same on both drivers too.
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
		for name, s := range setupFailures(t, v.u, dir) {
			got[name] = s
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
