package uv_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Attacks on the accepted connection's bookkeeping (the accept-path cut:
// the addresses' pair, the lane's release as the socket's record, Close's
// pooled record, the dropped-reactor keeper).

// warmFDNames is fdNames once Go's own netpoller is made (package net's
// first use makes its epoll descriptor, which the counts must not take
// for a leak), its sockets only: a reactor makes its watcher's epoll
// descriptor when it first needs it, and keeps it until its Close.
func warmFDNames(t *testing.T) map[string]string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	l.Close()
	return socketsOf(fdNames())
}

// socketsOf keeps the sockets of an fdNames list.
func socketsOf(m map[string]string) map[string]string {
	for k, v := range m {
		if !strings.HasPrefix(v, "socket:") {
			delete(m, k)
		}
	}
	return m
}

// waitSockets is waitFDs for the sockets alone.
func waitSockets(t *testing.T, before map[string]string) {
	t.Helper()
	deadline := time.Now().Add(uv.UvtSafety)
	for {
		diff := cmp.Diff(before, socketsOf(fdNames()))
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sockets (-before +after):\n%s", diff)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// closeOK: what a Close of an accepted connection may answer when others
// close it too, or its reactor closed: nil, or that it is closed.
func closeOK(err error) bool {
	return err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, uv.ErrClosed) || errors.Is(err, reactor.ErrReactorClosed)
}

// acceptMany dials the listener n times with package net and accepts each:
// the clients and the server ends, in order. keepAlive opens each server
// end in libuv first (libuv driver), so that its read lane is a duplicate.
func acceptMany(t *testing.T, v *ioEnv, n int, keepAlive bool) ([]net.Conn, []*uv.IO) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	clients := make([]net.Conn, n)
	servers := make([]*uv.IO, n)
	for i := range n {
		c, err := net.Dial(v.network, v.ln.Addr().String())
		uv.UvtMust(t, err)
		s, err := v.ln.AcceptIO(ctx)
		uv.UvtMust(t, err)
		if keepAlive {
			uv.UvtMust(t, s.SetKeepAlive(true))
		}
		clients[i], servers[i] = c, s
	}
	return clients, servers
}

// Many goroutines read, write and set deadlines on accepted connections
// while two goroutines and the loop close each at once: every Close
// answers nil or closed, each connection ends (the client reads its end),
// and the process holds the descriptors it held before.
func TestAttackAcceptedCloseStorm(t *testing.T) {
	for _, mode := range []struct {
		name      string
		keepAlive bool
	}{{"unopened", false}, {"opened", true}} {
		t.Run(mode.name, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				c0, s0 := v.pair(t)
				before := warmFDNames(t)
				for round := range 5 {
					clients, servers := acceptMany(t, v, 16, mode.keepAlive)
					var wg sync.WaitGroup
					errs := make(chan error, 3*len(servers))
					for i, s := range servers {
						c := clients[i]
						// Give half a read lane first (a blocking Read).
						if i%2 == 0 {
							_, err := c.Write([]byte{1})
							uv.UvtMust(t, err)
							_, err = s.Read(make([]byte, 1))
							uv.UvtMust(t, err)
						}
						goWG(&wg, func() {
							b := make([]byte, 64)
							for {
								if _, err := s.Read(b); err != nil {
									return
								}
							}
						})
						goWG(&wg, func() {
							b := make([]byte, 512)
							for {
								if _, err := s.Write(b); err != nil {
									return
								}
							}
						})
						goWG(&wg, func() {
							for j := 0; ; j++ {
								if err := s.SetDeadline(time.Now().Add(time.Duration(j%3) * time.Millisecond)); err != nil {
									return
								}
								if s.SetReadDeadline(time.Time{}) != nil {
									return
								}
								runtime.Gosched()
								if j > 200 {
									return
								}
							}
						})
						goWG(&wg, func() { // the client drains, and sees the end
							c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
							b := make([]byte, 4096)
							for {
								if _, err := c.Read(b); err != nil {
									return
								}
							}
						})
					}
					// Let them run a moment, then close every one three ways at once.
					time.Sleep(time.Millisecond)
					for _, s := range servers {
						goWG(&wg, func() { errs <- s.Close() })
						goWG(&wg, func() { errs <- s.Close() })
						goWG(&wg, func() {
							done := make(chan error, 1)
							if err := v.u.Reactor.Post(func() { done <- s.Close() }); err != nil {
								done <- err
							}
							errs <- <-done
						})
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						if !closeOK(err) {
							t.Errorf("round %d: Close = %v", round, err)
						}
					}
					for _, c := range clients {
						c.Close()
					}
					waitSockets(t, before)
				}
				v.finish(t, c0, s0)
			})
		})
	}
}

// A Close from the connection's own read callback (on the loop, inside
// the event's pass) while a goroutine closes it too.
func TestAttackAcceptedCloseFromCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		before := warmFDNames(t)
		clients, servers := acceptMany(t, v, 16, false)
		var wg sync.WaitGroup
		var cbCloses []chan error
		for i, s := range servers {
			// A lane first, for half.
			if i%2 == 0 {
				_, err := clients[i].Write([]byte{1})
				uv.UvtMust(t, err)
				_, err = s.Read(make([]byte, 1))
				uv.UvtMust(t, err)
			}
			// The callback's Close runs unless the goroutine's closed the
			// connection first (then no callback comes).
			closed := make(chan error, 1)
			_, err := s.OnRead(func(p []byte, err error) {
				select {
				case closed <- s.Close():
				default:
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.Start())
			_, err = clients[i].Write([]byte{2})
			uv.UvtMust(t, err)
			if i%4 == 1 { // the callback's Close alone, for some
				if err := uv.UvtRecv(t, closed, "the callback's Close"); !closeOK(err) {
					t.Errorf("the callback's Close = %v", err)
				}
				continue
			}
			goWG(&wg, func() {
				if err := s.Close(); !closeOK(err) {
					t.Errorf("Close = %v", err)
				}
			})
			cbCloses = append(cbCloses, closed)
		}
		wg.Wait()
		for _, ch := range cbCloses {
			select {
			case err := <-ch:
				if !closeOK(err) {
					t.Errorf("the callback's Close = %v", err)
				}
			default:
			}
		}
		for _, c := range clients {
			c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Errorf("the client read a byte after its server end closed")
			}
			c.Close()
		}
		waitSockets(t, before)
		v.finish(t, c0, s0)
	})
}

// The reactor closes while connections are accepted, read and written:
// Accepts end, every connection's Close after it answers nil or closed, and
// no descriptor is left.
func TestAttackReactorCloseMidAccept(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		addr := ln.Addr().String()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		var mu sync.Mutex
		var accepted []*uv.IO
		var clients []net.Conn
		var wg sync.WaitGroup
		quit := make(chan struct{})
		// The dialers make at most dials connections: each accepted one
		// has a writer that spins while its peer's buffer has room, and
		// the test means a reactor closing under load, not hundreds of
		// goroutines starving the test's own.
		var dials atomic.Int32
		for range 3 {
			goWG(&wg, func() {
				for dials.Add(1) <= 32 {
					select {
					case <-quit:
						return
					default:
					}
					c, err := net.Dial("tcp4", addr)
					if err != nil {
						continue
					}
					c.Write([]byte("x"))
					mu.Lock()
					clients = append(clients, c)
					mu.Unlock()
				}
			})
		}
		for range 3 {
			goWG(&wg, func() {
				for {
					s, err := ln.AcceptIO(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					accepted = append(accepted, s)
					mu.Unlock()
					goWG(&wg, func() {
						b := make([]byte, 8)
						for {
							if _, err := s.Read(b); err != nil {
								return
							}
						}
					})
					goWG(&wg, func() {
						for {
							if _, err := s.Write([]byte("y")); err != nil {
								return
							}
						}
					})
				}
			})
		}
		uv.UvtWaitFor(t, "a few accepted connections", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(accepted) >= 20
		})
		stop()
		if err := u.Close(); err != nil {
			t.Errorf("reactor Close = %v", err)
		}
		close(quit)
		// The clients' ends close, so that no Read or Write of the
		// server ends waits for ever, whatever the reactor's close did.
		mu.Lock()
		for _, c := range clients {
			c.Close()
		}
		mu.Unlock()
		var cw sync.WaitGroup
		mu.Lock()
		for _, s := range accepted {
			for range 2 {
				goWG(&cw, func() {
					if err := s.Close(); !closeOK(err) {
						t.Errorf("Close after the reactor's = %v", err)
					}
				})
			}
		}
		mu.Unlock()
		cw.Wait()
		wg.Wait()
		mu.Lock()
		for _, c := range clients { // the ones dialed meanwhile
			c.Close()
		}
		mu.Unlock()
		waitSockets(t, before)
	})
}

// Accepted connections dropped without Close under GOGC=1, some with a
// read lane, some opened in libuv (a duplicate lane): the collector's
// cleanup closes each, and the process holds the descriptors it held
// before.
func TestAttackDroppedAcceptedConnections(t *testing.T) {
	defer debugGC(1)()
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		before := warmFDNames(t)
		var clients []net.Conn
		for round := range 3 {
			cs, ss := acceptMany(t, v, 12, false)
			for i, s := range ss {
				switch i % 3 {
				case 1:
					_, err := cs[i].Write([]byte{1})
					uv.UvtMust(t, err)
					_, err = s.Read(make([]byte, 1))
					uv.UvtMust(t, err)
				case 2:
					uv.UvtMust(t, s.SetKeepAlive(true))
					_, err := cs[i].Write([]byte{1})
					uv.UvtMust(t, err)
					_, err = s.Read(make([]byte, 1))
					uv.UvtMust(t, err)
				}
				_ = s.LocalAddr()
				_ = s.RemoteAddr()
			}
			clients = append(clients, cs...)
			_ = round
		}
		// The server ends are gone: each client reads its end once the
		// collector closed it.
		for _, c := range clients {
			c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			b := make([]byte, 1)
			for {
				runtime.GC()
				c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
				_, err := c.Read(b)
				if err == nil || !errors.Is(err, syscall.EAGAIN) && !isTimeout(err) {
					break
				}
			}
			c.Close()
		}
		// Collected and closed: the descriptors come back.
		deadline := time.Now().Add(uv.UvtSafety)
		for time.Now().Before(deadline) && cmp.Diff(before, socketsOf(fdNames())) != "" {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		waitSockets(t, before)
		v.finish(t, c0, s0)
	})
}

// A reactor dropped without Close, holding accepted connections dropped
// with it (unopened with a lane, opened in libuv with a duplicate lane,
// none): the reactor is collected (nothing its dropped-reactor cleanup
// keeps holds it), and its cleanup closes every descriptor.
func TestAttackDroppedReactorWithAcceptedConnections(t *testing.T) {
	defer debugGC(1)()
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		wr, clients := droppedReactorWithConnections(t, d)
		for _, c := range clients {
			defer c.Close()
		}
		deadline := time.Now().Add(uv.UvtSafety)
		for wr.Value() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the dropped reactor was never collected")
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		for _, c := range clients {
			c.Close()
		}
		for time.Now().Before(deadline) && cmp.Diff(before, socketsOf(fdNames())) != "" {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		waitSockets(t, before)
	})
}

func droppedReactorWithConnections(t *testing.T, d reactor.Driver) (weak.Pointer[reactor.Reactor], []net.Conn) {
	r, err := reactor.New(reactor.Options{Driver: d, BlockedAfter: time.Minute})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skipf("the %s driver is not in this build (no cgo)", d)
	}
	uv.UvtMust(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	actx, acancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer acancel()
	var clients []net.Conn
	for i := range 9 {
		c, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		clients = append(clients, c)
		s, err := ln.AcceptIO(actx)
		uv.UvtMust(t, err)
		if i%3 == 2 {
			uv.UvtMust(t, s.SetKeepAlive(true))
		}
		if i%3 != 0 {
			_, err = c.Write([]byte{1})
			uv.UvtMust(t, err)
			_, err = s.Read(make([]byte, 1))
			uv.UvtMust(t, err)
		}
		_ = s.RemoteAddr()
	}
	// A started listener holds the reactor (docs/reliability.md's limits):
	// closed, the connections are what the reactor is dropped with.
	uv.UvtMust(t, ln.Close())
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v", err)
	}
	return weak.Make(r), clients
}

// The addresses of an accepted connection its peer reset before the
// Accept, on either driver, as package net's server reads them for the
// same connection: IPv4 and IPv6.
func TestAttackResetConnectionAddrs(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			host := "127.0.0.1"
			if network == "tcp6" {
				host = "::1"
			}
			// net's answer: a net listener, a connection reset before its Accept.
			nln, err := net.Listen(network, net.JoinHostPort(host, "0"))
			if err != nil {
				t.Skipf("no %s loopback here: %v", network, err)
			}
			defer nln.Close()
			want := resetThenAccept(t, network, nln.Addr().String(), func() (net.Addr, net.Addr) {
				c, err := nln.Accept()
				uv.UvtMust(t, err)
				defer c.Close()
				return c.LocalAddr(), c.RemoteAddr()
			})
			if want[1] == "<nil>" {
				t.Logf("net's accepted reset connection has no RemoteAddr")
			}
			ioEachDriver(t, network, func(t *testing.T, v *ioEnv) {
				c0, s0 := v.pair(t)
				got := resetThenAccept(t, network, v.ln.Addr().String(), func() (net.Addr, net.Addr) {
					s, err := v.ln.AcceptIO(context.Background())
					uv.UvtMust(t, err)
					defer s.Close()
					return s.LocalAddr(), s.RemoteAddr()
				})
				// Ports differ between the two listeners and clients:
				// compare the hosts, and that there is a port.
				if diff := cmp.Diff(hostsOf(t, want), hostsOf(t, got)); diff != "" {
					t.Errorf("reset connection's [LocalAddr, RemoteAddr] hosts (-net's +got):\n%s\n(net's %v, got %v)", diff, want, got)
				}
				v.finish(t, c0, s0)
			})
		})
	}
}

// resetThenAccept connects to addr with a raw socket, resets the
// connection (SO_LINGER 0, close) and accepts it: the addresses accept
// gives, as strings, with the client's own address as its RemoteAddr
// should read (compared by the caller).
func resetThenAccept(t *testing.T, network, addr string, accept func() (local, remote net.Addr)) [2]string {
	t.Helper()
	c, err := net.Dial(network, addr)
	uv.UvtMust(t, err)
	tc := c.(*net.TCPConn)
	clientAddr := c.LocalAddr().String()
	uv.UvtMust(t, tc.SetLinger(0))
	time.Sleep(10 * time.Millisecond) // the handshake done, the connection queued
	c.Close()                         // RST
	time.Sleep(10 * time.Millisecond) // the reset arrived
	l, r := accept()
	got := [2]string{str(l), str(r)}
	if got[1] != "<nil>" && got[1] != clientAddr {
		t.Errorf("RemoteAddr of the reset connection = %s, want the client's %s", got[1], clientAddr)
	}
	return got
}

func str(a net.Addr) string {
	if a == nil {
		return "<nil>"
	}
	return a.String()
}

// hostsOf strips the ports: "host|port?" for each address.
func hostsOf(t *testing.T, a [2]string) [2]string {
	var out [2]string
	for i, s := range a {
		if s == "<nil>" {
			out[i] = s
			continue
		}
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			t.Fatalf("address %q: %v", s, err)
		}
		out[i] = h + "|port:" + map[bool]string{true: "none", false: "some"}[p == "0"]
	}
	return out
}

// An accepted Unix connection's addresses read as package net's do.
func TestAttackUnixAcceptedAddrs(t *testing.T) {
	dir := t.TempDir()
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		path := dir + "/" + u.Reactor.Driver().String() + ".sock"
		ln, err := uv.Listen(u.Reactor, "unix", path)
		uv.UvtMust(t, err)
		defer ln.Close()
		c, err := net.Dial("unix", path)
		uv.UvtMust(t, err)
		defer c.Close()
		s, err := ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		defer s.Close()
		// net's server side of a Unix connection: its local address is
		// the listener's path, its remote one unnamed.
		nln, err := net.Listen("unix", path+".net")
		uv.UvtMust(t, err)
		defer nln.Close()
		nc, err := net.Dial("unix", path+".net")
		uv.UvtMust(t, err)
		defer nc.Close()
		ns, err := nln.Accept()
		uv.UvtMust(t, err)
		defer ns.Close()
		want := [2]string{str(ns.LocalAddr()), str(ns.RemoteAddr())}
		want[0] = path // the listener's own path in place of net's
		if want[1] == "@" {
			want[1] = "" // an unnamed socket's address is "" (docs/io.md), not net's "@"
		}
		got := [2]string{str(s.LocalAddr()), str(s.RemoteAddr())}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("accepted Unix connection's [LocalAddr, RemoteAddr] (-net's +got):\n%s", diff)
		}
	})
}
