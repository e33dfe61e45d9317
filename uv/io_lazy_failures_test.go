package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestLazySendIO: an accepted connection never opened in libuv
// (with a read lane, a Read waiting in it, and without one) passed over an
// IPC pipe: the IO received reads what the peer sends and writes to it,
// the sender's stays open and its own, and once both are closed the peer
// reads the end and no socket is left.
func TestLazySendIO(t *testing.T) {
	for _, how := range []string{"laned", "unlaned"} {
		t.Run(how, func(t *testing.T) {
			baseSockets := uv.UvtOpenSockets(t)
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				from, to := ipcPair(t, v.u)
				var c, s *uv.IO
				if how == "laned" {
					c, s = v.pair(t)
				} else {
					c, s = acceptByCallback(t, v)
				}
				uv.UvtMust(t, from.SendIO(ctx, s))
				got, err := to.Receive(ctx)
				uv.UvtMust(t, err)
				r := got.IO
				if r == nil {
					t.Fatalf("Receive = %+v, want an IO", got)
				}
				if v.u.Driver() == reactor.DriverLibuv && uv.UvtOpenedInLibuv(s) {
					t.Errorf("SendIO opened the connection in libuv")
				}
				_, err = c.Write([]byte("ping"))
				uv.UvtMust(t, err)
				if b := readN(t, r, 4); string(b) != "ping" {
					t.Errorf("the received IO read %q", b)
				}
				_, err = r.Write([]byte("pong"))
				uv.UvtMust(t, err)
				_, err = s.Write([]byte("PONG"))
				uv.UvtMust(t, err)
				if b := readN(t, c, 8); string(b) != "pongPONG" {
					t.Errorf("the peer read %q", b)
				}
				uv.UvtMust(t, s.Close())
				_, err = r.Write([]byte("after"))
				uv.UvtMust(t, err)
				if b := readN(t, c, 5); string(b) != "after" {
					t.Errorf("the peer read %q after the sender's Close", b)
				}
				uv.UvtMust(t, r.Close())
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Errorf("the peer's Read after both closed = %d, %v; want the end", n, err)
				}
				c.Close()
				from.Close()
				to.Close()
				v.finish(t)
			})
			uv.UvtWaitFor(t, "the sockets to close", func() bool { return uv.UvtOpenSockets(t) <= baseSockets })
		})
	}
}

// TestLazyHTTP: net/http served over a Listener on both drivers, 8
// clients with keep-alive and one without, requests whose bodies and
// responses are up to 2 MiB (the large ones make libuv queue the rest of a
// write, opening the connection), some with Connection: close: every
// response is the one asked for, byte for byte.
func TestLazyHTTP(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			n, _ := strconv.Atoi(req.URL.Query().Get("n"))
			seed, _ := strconv.Atoi(req.URL.Query().Get("seed"))
			if want := lazyBody(seed+1, len(body)); !bytes.Equal(body, want) {
				http.Error(w, "body differs", 400)
				return
			}
			w.Write(lazyBody(seed, n))
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(v.ln) }()
		url := "http://" + v.ln.Addr().String()
		var wg sync.WaitGroup
		for cl := range 9 {
			goWG(&wg, func() {
				tr := &http.Transport{DisableKeepAlives: cl == 8}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr, Timeout: uv.UvtSafety}
				rng := rand.New(rand.NewPCG(uint64(cl), 5))
				for i := range 40 {
					seed := cl*1000 + i
					n := rng.IntN(300)
					if rng.IntN(6) == 0 {
						n = rng.IntN(2 << 20)
					}
					in := lazyBody(seed+1, rng.IntN(100))
					if rng.IntN(8) == 0 {
						in = lazyBody(seed+1, rng.IntN(1<<20))
					}
					req, err := http.NewRequest("POST", fmt.Sprintf("%s/?n=%d&seed=%d", url, n, seed), bytes.NewReader(in))
					if err != nil {
						t.Error(err)
						return
					}
					req.Close = rng.IntN(10) == 0
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("client %d request %d: %v", cl, i, err)
						return
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, lazyBody(seed, n)) {
						t.Errorf("client %d request %d: status %d, %d bytes, %v; want %d bytes", cl, i, resp.StatusCode, len(body), err, n)
						return
					}
				}
			})
		}
		wg.Wait()
		uv.UvtMust(t, srv.Close())
		if err := uv.UvtRecv(t, served, "Serve's end"); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v, want ErrServerClosed", err)
		}
		v.finish(t)
	})
}

// lazyBody is n bytes that seed names.
func lazyBody(seed, n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(seed), 9))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestLazyDroppedReactor: libuv reactors dropped without Close and
// collected (GOGC 5) while they hold accepted connections never opened in
// libuv with a read lane (AcceptIO's, a Read made through it) and ones
// left as accepted: no descriptor is left, and every peer reads the end.
// (Case 1, a write libuv queued, opening the connection, and case 3, a
// dialled connection's queued write, are left out: a reactor with a write
// in flight is not collected, whichever connection it is on; run them with
// UVEVENT_LAZY_DROP_CASE=1 or 3.)
func TestLazyDroppedReactor(t *testing.T) {
	defer debugGC(5)()
	base, fds := uv.UvtBaseline(t)
	var peers []net.Conn
	var collected atomic.Int32
	const reactors = 3
	for range reactors {
		peers = append(peers, lazyDroppedReactor(t, &collected)...)
	}
	uv.UvtWaitFor(t, "every dropped reactor to be collected", func() bool {
		runtime.GC()
		return collected.Load() == reactors
	})
	var ends []string
	for _, p := range peers {
		p.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		var err error
		for err == nil {
			_, err = p.Read(make([]byte, 1<<16))
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			ends = append(ends, "timeout")
		} else {
			ends = append(ends, "end")
		}
		p.Close()
	}
	want := make([]string, len(peers))
	for i := range want {
		want[i] = "end"
	}
	if diff := cmp.Diff(want, ends); diff != "" {
		t.Errorf("the peers' ends (-want +got):\n%s", diff)
	}
	uv.UvtNoLeaks(t, base, fds)
}

func lazyDroppedReactor(t *testing.T, collected *atomic.Int32) []net.Conn {
	t.Helper()
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverLibuv})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skip("the libuv driver is not in this build (no cgo)")
	}
	uv.UvtMust(t, err)
	runtime.AddCleanup(r, func(c *atomic.Int32) { c.Add(1) }, collected)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	var peers []net.Conn
	for i := range 6 {
		p, err := net.Dial("tcp4", ln.Addr().String())
		uv.UvtMust(t, err)
		peers = append(peers, p)
		c, err := ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if lazyDropCase(i) == 3 { // a dialled connection's queued write, to compare
			nl, err := net.Listen("tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			d, err := uv.Dial(context.Background(), r, "tcp4", nl.Addr().String())
			uv.UvtMust(t, err)
			a, err := nl.Accept()
			uv.UvtMust(t, err)
			nl.Close()
			peers = append(peers, a)
			uv.UvtMust(t, r.Call(func() {
				if err := d.Send(make([]byte, 8<<20)); err != nil {
					t.Errorf("Send: %v", err)
				}
			}))
		}
		switch lazyDropCase(i) {
		case 0: // a Read through the lane
			p.Write([]byte("x"))
			if _, err := c.Read(make([]byte, 1)); err != nil {
				t.Fatalf("Read: %v", err)
			}
		case 1: // a write libuv queues: opened in libuv
			uv.UvtMust(t, r.Call(func() {
				if err := c.Send(make([]byte, 8<<20)); err != nil {
					t.Errorf("Send: %v", err)
				}
			}))
		}
	}
	cancel()
	<-served
	ln.Stop()
	// Not closed: dropped, with its listener and connections.
	return peers
}

// lazyDropCase picks what connection i of a dropped reactor is
// (UVEVENT_LAZY_DROP_CASE pins one, to tell them apart).
func lazyDropCase(i int) int {
	if s := os.Getenv("UVEVENT_LAZY_DROP_CASE"); s != "" {
		n, _ := strconv.Atoi(s)
		return n
	}
	return []int{0, 2}[i%2]
}

// TestLazyPeerResetsMidOpen: the peer resets the connection while a
// Read waits in the lane and the loop opens the connection in libuv (a
// Start): the Read and the callbacks end with the reset (or the end),
// RemoteAddr still answers, and no socket is left once it is closed.
func TestLazyPeerResetsMidOpen(t *testing.T) {
	baseSockets := uv.UvtOpenSockets(t)
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		for i := range 40 {
			p, err := net.Dial("tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			s, err := v.ln.AcceptIO(ctx)
			cancel()
			uv.UvtMust(t, err)
			readErr := make(chan error, 1)
			go func() {
				var err error
				for err == nil {
					_, err = s.Read(make([]byte, 100))
				}
				readErr <- err
			}()
			cbErr := make(chan error, 4)
			var wg sync.WaitGroup
			goWG(&wg, func() {
				v.u.Call(func() {
					s.OnRead(func(_ []byte, err error) {
						if err != nil {
							cbErr <- err
						}
					})
					s.Start()
				})
			})
			goWG(&wg, func() {
				if i%2 == 0 {
					p.Write([]byte("unread"))
				}
				p.(*net.TCPConn).SetLinger(0)
				p.Close()
			})
			wg.Wait()
			var got error
			select {
			case got = <-readErr:
			case got = <-cbErr:
			case <-time.After(uv.UvtSafety):
				t.Fatalf("neither the Read nor the callbacks heard of the reset")
			}
			if got != io.EOF && !errors.Is(got, syscall.ECONNRESET) && !errors.Is(got, uv.ErrClosed) {
				t.Errorf("connection %d ended with %v, want a reset or the end", i, got)
			}
			if s.RemoteAddr() == nil {
				t.Errorf("connection %d: no RemoteAddr after the reset", i)
			}
			uv.UvtMust(t, s.Close())
			if t.Failed() {
				break
			}
		}
		v.finish(t)
	})
	uv.UvtWaitFor(t, "the sockets to close", func() bool { return uv.UvtOpenSockets(t) <= baseSockets })
}
