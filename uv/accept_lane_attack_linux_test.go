package uv_test

import (
	"bytes"
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

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Attacks on the read lane an Accept's goroutine makes for the connection
// it takes (io_readlane.go: makeAcceptedLane), while the loop may take the
// making back (the IO's close, a callback's first blocking Read).

// pipeChurn opens, uses and closes pipes on its own goroutines until stop
// is called, and reports every failure: a descriptor of the program closed
// a second time (a number the kernel gave a pipe meanwhile) shows as a
// write or read of the pipe failing, or reading what it did not write.
func pipeChurn(workers int) (stop func() []string) {
	var mu sync.Mutex
	var fails []string
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(fails) < 10 {
			fails = append(fails, s)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		goWG(&wg, func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				var p [2]int
				if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
					continue // EMFILE: the other tests' descriptors come and go
				}
				b := []byte{byte(w), byte(i)}
				if n, err := syscall.Write(p[1], b); n != 2 || err != nil {
					fail("pipe write: " + errString(err))
				}
				got := make([]byte, 4)
				if n, err := syscall.Read(p[0], got); n != 2 || err != nil || !bytes.Equal(got[:n], b) {
					fail("pipe read: " + errString(err))
				}
				for _, fd := range p {
					if err := syscall.Close(fd); err != nil {
						fail("pipe close: " + errString(err))
					}
				}
			}
		})
	}
	return func() []string {
		close(done)
		wg.Wait()
		return fails
	}
}

func errString(err error) string {
	if err == nil {
		return "short"
	}
	return err.Error()
}

// TestAttackAcceptLaneReactorCloseFDReuse: the reactor closes while four
// Accepts take the connections queued for them (and make their lanes),
// with a goroutine closing each at once, and more peers dialing, while
// pipes are opened and closed all along: no pipe's descriptor is closed by
// anyone else (every descriptor of a connection is closed once), every
// Close answers nil or closed, every peer reads its end, and the sockets
// are the ones held before. On either driver; the close comes at once, or
// once a few connections are taken.
func TestAttackAcceptLaneReactorCloseFDReuse(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		for round := range 6 {
			stopChurn := pipeChurn(2)
			u, stopServe, ln := listenBacklog(t, d, 64)
			v := &ioEnv{network: "tcp4", u: u, ln: ln, stop: stopServe}
			c0, s0 := v.pair(t) // the listener serves: the next connections queue
			c0.Close()
			s0.Close()
			addr := v.ln.Addr().String()
			const queued = 24
			peers := dialN(t, v.ln, queued)
			uv.UvtWaitFor(t, "the connections queued for Accept", func() bool { return uv.UvtAcceptsQueued(v.ln) == queued })
			var mu sync.Mutex
			var wg sync.WaitGroup
			quit := make(chan struct{})
			goWG(&wg, func() {
				for range 16 {
					select {
					case <-quit:
						return
					default:
					}
					p, err := net.Dial("tcp4", addr)
					if err != nil {
						continue
					}
					mu.Lock()
					peers = append(peers, p)
					mu.Unlock()
				}
			})
			var accepted atomic.Int32
			for range 4 {
				goWG(&wg, func() {
					for {
						s, err := v.ln.AcceptIO(context.Background())
						if err != nil {
							return
						}
						accepted.Add(1)
						goWG(&wg, func() {
							if err := s.Close(); !closeOK(err) {
								t.Errorf("Close of an accepted connection = %v", err)
							}
						})
					}
				})
			}
			if round%2 == 1 {
				uv.UvtWaitFor(t, "a few connections accepted", func() bool { return accepted.Load() >= 4 })
			}
			v.stop()
			if err := v.u.Close(); err != nil {
				t.Errorf("reactor Close = %v", err)
			}
			close(quit)
			wg.Wait()
			if fails := stopChurn(); len(fails) > 0 {
				t.Errorf("round %d: pipes opened meanwhile failed: %v", round, fails)
			}
			peersEnd(t, peers)
			waitSockets(t, before)
		}
	})
}

// TestAttackAcceptLaneListenerCloseMidAccept: the listener closes while
// Accepts take connections: each connection an Accept returned reads and
// echoes its peer's byte through its lane, each peer of one never taken
// reads its end, and no socket is left. On either driver.
func TestAttackAcceptLaneListenerCloseMidAccept(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		for round := range 4 {
			ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			addr := ln.Addr().String()
			var mu sync.Mutex
			owner := map[string]*uv.IO{} // a peer's local address: the server end that took it
			var wg sync.WaitGroup
			for range 4 {
				goWG(&wg, func() {
					for {
						s, err := ln.AcceptIO(context.Background())
						if err != nil {
							if !errors.Is(err, net.ErrClosed) && !errors.Is(err, uv.ErrClosed) {
								t.Errorf("Accept after the listener's Close = %v", err)
							}
							return
						}
						mu.Lock()
						owner[s.RemoteAddr().String()] = s
						mu.Unlock()
					}
				})
			}
			var peers []net.Conn
			for i := range 32 {
				p, err := net.Dial("tcp4", addr)
				uv.UvtMust(t, err)
				uv.UvtMust(t, p.SetDeadline(time.Now().Add(uv.UvtSafety)))
				_, err = p.Write([]byte{byte(i)})
				uv.UvtMust(t, err)
				peers = append(peers, p)
				if i == 8+round*4 {
					uv.UvtMust(t, ln.Close())
					break // the next dials are refused
				}
			}
			wg.Wait()
			for i, p := range peers {
				mu.Lock()
				s := owner[p.LocalAddr().String()]
				mu.Unlock()
				b := make([]byte, 1)
				if s == nil {
					if n, err := p.Read(b); n != 0 || err == nil {
						t.Errorf("round %d: peer %d, never accepted, read %d, %v; want its end", round, i, n, err)
					}
					p.Close()
					continue
				}
				if _, err := s.Read(b); err != nil || b[0] != byte(i) {
					t.Errorf("round %d: connection %d read %v, %v", round, i, b, err)
				}
				if _, err := s.Write(b); err != nil {
					t.Errorf("round %d: connection %d's Write = %v", round, i, err)
				}
				if _, err := p.Read(b); err != nil || b[0] != byte(i) {
					t.Errorf("round %d: peer %d read %v, %v; want its byte back", round, i, b, err)
				}
				uv.UvtMust(t, s.Close())
				p.Close()
			}
		}
		stop()
		uv.UvtShutdown(t, u, false)
		waitSockets(t, before)
	})
}

// TestAttackAcceptLaneCallbackSubscribesMidAccept: a callback subscribes
// to the listener while Accepts take connections: every connection goes
// to one owner (an Accept,
// or the callback, whose connection reads its byte through OnRead and
// then through a blocking Read), each peer gets its bytes echoed by it,
// and no socket is left. On either driver.
func TestAttackAcceptLaneCallbackSubscribesMidAccept(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		before := warmFDNames(t)
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		for round := range 3 {
			ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			addr := ln.Addr().String()
			var wg sync.WaitGroup
			var byAccept, byCallback atomic.Int32
			// echo answers each byte of the peer on s, by blocking Reads.
			echo := func(s *uv.IO) {
				goWG(&wg, func() {
					defer s.Close()
					b := make([]byte, 1)
					for {
						if _, err := s.Read(b); err != nil {
							return
						}
						if _, err := s.Write(b); err != nil {
							return
						}
					}
				})
			}
			for range 3 {
				goWG(&wg, func() {
					for {
						s, err := ln.AcceptIO(context.Background())
						if err != nil {
							return
						}
						byAccept.Add(1)
						echo(s)
					}
				})
			}
			const n = 32
			peers := make([]net.Conn, n)
			for i := range n {
				p, err := net.Dial("tcp4", addr)
				uv.UvtMust(t, err)
				uv.UvtMust(t, p.SetDeadline(time.Now().Add(uv.UvtSafety)))
				peers[i] = p
				if i == 4+round*8 {
					// The callback: its connection's first byte through
					// OnRead (echoed there), the rest through blocking
					// Reads once OnRead is let go.
					_, err := event.Subscribe(ln, func(_ event.Event, res any, _ error) {
						s, ok := res.(*uv.IO)
						if !ok {
							return
						}
						byCallback.Add(1)
						var cb *event.Callback
						cb, err := s.OnRead(func(p []byte, err error) {
							if err != nil || len(p) == 0 {
								return
							}
							s.Send(append([]byte(nil), p...))
							s.Stop()
							s.DelCallback(cb)
							echo(s)
						})
						if err != nil {
							t.Errorf("OnRead: %v", err)
							return
						}
						if err := s.Start(); err != nil {
							t.Errorf("Start: %v", err)
						}
					})
					uv.UvtMust(t, err)
				}
			}
			for i, p := range peers {
				for j := range 2 {
					b := []byte{byte(i*2 + j)}
					_, err := p.Write(b)
					uv.UvtMust(t, err)
					got := make([]byte, 1)
					if _, err := p.Read(got); err != nil || got[0] != b[0] {
						t.Errorf("round %d: peer %d's byte %d echoed as %v, %v", round, i, j, got, err)
					}
				}
			}
			if a, c := byAccept.Load(), byCallback.Load(); a+c != n {
				t.Errorf("round %d: %d connections to Accepts and %d to the callback, want %d in all", round, a, c, n)
			}
			for _, p := range peers {
				p.Close()
			}
			uv.UvtMust(t, ln.Close())
			wg.Wait()
		}
		stop()
		uv.UvtShutdown(t, u, false)
		waitSockets(t, before)
	})
}

// TestAttackAcceptLaneCallsAtOnce: the calls made on a connection the
// moment Accept returns it reach the lane Accept's goroutine made: a read
// deadline set in the past fails the Read at once (and one set in the
// past while a Read waits wakes it), a deadline removed lets the next
// Read take the peer's byte, and a Write goes out. On either driver, with
// the Read already waiting for half of them when the deadline passes.
func TestAttackAcceptLaneCallsAtOnce(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		before := warmFDNames(t)
		const n = 24
		peers := make([]net.Conn, n)
		for i := range n {
			p, err := net.Dial("tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			uv.UvtMust(t, p.SetDeadline(time.Now().Add(uv.UvtSafety)))
			peers[i] = p
		}
		for i := range n {
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			if i%2 == 0 {
				uv.UvtMust(t, s.SetReadDeadline(time.Unix(1, 0)))
				if n, err := s.Read(make([]byte, 1)); n != 0 || !isTimeout(err) {
					t.Errorf("connection %d: a Read past its deadline = %d, %v; want a timeout", i, n, err)
				}
			} else {
				res := make(chan error, 1)
				go func() {
					_, err := s.Read(make([]byte, 1))
					res <- err
				}()
				uv.UvtWaitFor(t, "the Read waiting in the lane", func() bool { return uv.UvtReadLane(s) == "busy" })
				uv.UvtMust(t, s.SetDeadline(time.Unix(1, 0)))
				if err := uv.UvtRecv(t, res, "the Read whose deadline passed"); !isTimeout(err) {
					t.Errorf("connection %d: a waiting Read whose deadline passed = %v; want a timeout", i, err)
				}
			}
			uv.UvtMust(t, s.SetDeadline(time.Time{}))
			_, err = peers[i].Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			if b := readN(t, s, 1); b[0] != byte(i) {
				t.Errorf("connection %d read %v", i, b)
			}
			_, err = s.Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			b := make([]byte, 1)
			if _, err := peers[i].Read(b); err != nil || b[0] != byte(i) {
				t.Errorf("peer %d read %v, %v", i, b, err)
			}
			uv.UvtMust(t, s.Close())
			peersEnd(t, peers[i:i+1])
		}
		waitSockets(t, before)
		v.finish(t, c0, s0)
	})
}

// TestAttackAcceptLanePeerReset: peers that send a byte and reset their
// connection before Accept takes it: Accept still returns each, its lane
// made; its Reads end (the byte, then the reset or the end: never a Read
// that waits for ever), a Write fails at last, Close answers nil, and no
// socket is left. On either driver.
func TestAttackAcceptLanePeerReset(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		before := warmFDNames(t)
		const n = 16
		for i := range n {
			p, err := net.Dial("tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			_, err = p.Write([]byte{byte(i)})
			uv.UvtMust(t, err)
			if i%2 == 1 {
				// Reset once the loop accepted it: it waits in Accept's
				// queue.
				uv.UvtWaitFor(t, "the connection queued for Accept", func() bool { return uv.UvtAcceptsQueued(v.ln) == 1 })
			}
			uv.UvtMust(t, p.(*net.TCPConn).SetLinger(0))
			uv.UvtMust(t, p.Close())
			s, err := v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.SetDeadline(time.Now().Add(uv.UvtSafety)))
			var got []byte
			var rerr error
			for rerr == nil {
				b := make([]byte, 8)
				var k int
				k, rerr = s.Read(b)
				got = append(got, b[:k]...)
			}
			if isTimeout(rerr) || len(got) > 1 || len(got) == 1 && got[0] != byte(i) {
				t.Errorf("connection %d, reset by its peer: read %v, then %v", i, got, rerr)
			}
			var werr error
			for range 1000 {
				if _, werr = s.Write([]byte("w")); werr != nil {
					break
				}
			}
			if werr == nil || isTimeout(werr) {
				t.Errorf("connection %d, reset by its peer: Writes = %v; want a failure", i, werr)
			}
			if err := s.Close(); err != nil {
				t.Errorf("connection %d, reset by its peer: Close = %v", i, err)
			}
		}
		waitSockets(t, before)
		v.finish(t, c0, s0)
	})
}

// TestAttackAcceptLaneNoDescriptors: connections queued for Accept are
// taken, read, written and closed while the process has no descriptor to
// spare (a thief takes each one freed): their lanes need none, so each
// serves its peer, and the descriptors the thief holds are all its own
// when it gives them back (none closed by anyone else: starveDescriptors). On either driver,
// in a child process whose lowered RLIMIT_NOFILE touches nothing else.
func TestAttackAcceptLaneNoDescriptors(t *testing.T) {
	if inChild(t, "UVEVENT_ACCEPT_LANE_EMFILE_CHILD") {
		ioEachDriver(t, "tcp4", acceptLaneNoDescriptorsChild)
	}
}

func acceptLaneNoDescriptorsChild(t *testing.T, v *ioEnv) {
	c0, s0 := v.pair(t) // the listener serves: the next connections queue
	const n = 12
	peers := make([]net.Conn, n)
	for i := range n {
		p, err := net.Dial("tcp4", v.ln.Addr().String())
		uv.UvtMust(t, err)
		uv.UvtMust(t, p.SetDeadline(time.Now().Add(uv.UvtSafety)))
		peers[i] = p
	}
	uv.UvtWaitFor(t, "every connection queued for Accept", func() bool { return uv.UvtAcceptsQueued(v.ln) == n })
	release := starveDescriptors(t) // which fails t if one of its descriptors was closed meanwhile
	for i, p := range peers {
		s, err := v.ln.AcceptIO(context.Background())
		uv.UvtMust(t, err)
		if got := uv.UvtReadLane(s); got != "open" {
			t.Errorf("connection %d's read lane with no descriptor to spare: %s, want open", i, got)
		}
		_, err = p.Write([]byte{byte(i)})
		uv.UvtMust(t, err)
		if b := readN(t, s, 1); b[0] != byte(i) {
			t.Errorf("connection %d read %v", i, b)
		}
		_, err = s.Write([]byte{byte(i)})
		uv.UvtMust(t, err)
		b := make([]byte, 1)
		if _, err := p.Read(b); err != nil || b[0] != byte(i) {
			t.Errorf("peer %d read %v, %v", i, b, err)
		}
		uv.UvtMust(t, s.Close())
	}
	release()
	peersEnd(t, peers)
	c0.Close()
	s0.Close()
	v.ln.Close()
	v.stop()
	uv.UvtShutdown(t, v.u, true)
	// The reactor may say, rightly, that it could not watch its loop's
	// descriptor while none was left; nothing else.
	for _, rep := range v.u.Reports() {
		if !errors.Is(rep.Err, syscall.EMFILE) || !strings.Contains(rep.Msg, "loop's descriptor") {
			t.Errorf("unexpected report: %v", rep)
		}
	}
}

// TestAttackAcceptLaneDropped: connections dropped the moment Accept
// returns them, never read, written or closed, while pipes are opened and
// closed: the collector's cleanup closes each (its peer reads its end),
// no pipe's descriptor is closed by anyone else, and the sockets are the
// ones held before. On either driver.
func TestAttackAcceptLaneDropped(t *testing.T) {
	defer debugGC(1)()
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c0, s0 := v.pair(t)
		before := warmFDNames(t)
		stopChurn := pipeChurn(2)
		const n = 32
		peers := make([]net.Conn, n)
		for i := range n {
			p, err := net.Dial("tcp4", v.ln.Addr().String())
			uv.UvtMust(t, err)
			peers[i] = p
			_, err = v.ln.AcceptIO(context.Background())
			uv.UvtMust(t, err)
		}
		for _, p := range peers {
			uv.UvtMust(t, p.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
			done := make(chan struct{})
			go func() { // the collector, until the peer reads its end
				for {
					select {
					case <-done:
						return
					default:
					}
					runtime.GC()
					time.Sleep(time.Millisecond)
				}
			}()
			k, err := p.Read(make([]byte, 1))
			close(done)
			if k != 0 || err == nil || isTimeout(err) {
				t.Errorf("the peer of a dropped connection read %d, %v; want its end", k, err)
			}
			p.Close()
		}
		if fails := stopChurn(); len(fails) > 0 {
			t.Errorf("pipes opened meanwhile failed: %v", fails)
		}
		waitSockets(t, before)
		v.finish(t, c0, s0)
	})
}
