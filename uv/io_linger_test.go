package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// lingerSize is what the lingering tests send: more than loopback's socket
// buffers take, so that most of it is still queued in the IO at Close.
const lingerSize = 24 << 20

// lingerData is lingerSize bytes of a pattern a reader can check.
func lingerData() []byte {
	p := make([]byte, lingerSize)
	for i := range p {
		p[i] = byte(i % 251)
	}
	return p
}

// lingerEnv is a served reactor and a TCP connection between one of its
// IOs and a net.Conn peer outside it: the IO is the dialed end or the
// accepted one.
type lingerEnv struct {
	u    *uv.UvtReactor
	stop func()
	io   *uv.IO
	peer net.Conn
	ln   io.Closer // the listener of the accepted end, or the peer's
}

// lingerEachEnd runs f on each driver, for an IO that dialed its peer and
// for one its listener accepted.
func lingerEachEnd(t *testing.T, f func(t *testing.T, v *lingerEnv)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		for _, end := range []string{"dialed", "accepted"} {
			t.Run(end, func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, d)
				v := &lingerEnv{u: u, stop: uv.UvtServe(t, u)}
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				var err error
				if end == "dialed" {
					ln, lerr := net.Listen("tcp4", "127.0.0.1:0")
					uv.UvtMust(t, lerr)
					defer ln.Close()
					v.ln = ln
					acc := make(chan net.Conn, 1)
					go func() {
						c, _ := ln.Accept()
						acc <- c
					}()
					v.io, err = uv.Dial(ctx, u.Reactor, "tcp4", ln.Addr().String())
					uv.UvtMust(t, err)
					v.peer = uv.UvtRecv(t, acc, "the accepted peer")
				} else {
					ln, lerr := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
					uv.UvtMust(t, lerr)
					defer ln.Close()
					v.ln = ln
					acc := make(chan *uv.IO, 1)
					go func() {
						c, _ := ln.AcceptIO(ctx)
						acc <- c
					}()
					v.peer, err = net.Dial("tcp4", ln.Addr().String())
					uv.UvtMust(t, err)
					v.io = uv.UvtRecv(t, acc, "the accepted IO")
				}
				if v.io == nil || v.peer == nil {
					t.FailNow()
				}
				defer v.peer.Close()
				f(t, v)
			})
		}
	})
}

// sendAll queues p on the IO in one Send, and checks that part of it is
// still queued (the close to come has something to linger for).
func (v *lingerEnv) sendAll(t *testing.T, p []byte) {
	t.Helper()
	uv.UvtMust(t, v.io.SetHighWaterMark(2*len(p)))
	uv.UvtMust(t, v.io.Send(p))
	if q := v.io.Queued(); q == 0 {
		t.Fatalf("Queued after a %d-byte Send to a peer not reading = 0: nothing to linger for", len(p))
	}
}

// drops returns the DropErrors reported so far.
func drops(u *uv.UvtReactor) []*uv.DropError {
	var ds []*uv.DropError
	for _, r := range u.Reports() {
		var d *uv.DropError
		if errors.As(r.Err, &d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// waitDrop waits for the one drop report and checks it: some bytes
// dropped, a reset, and its cause.
func waitDrop(t *testing.T, u *uv.UvtReactor, cause error) {
	t.Helper()
	uv.UvtWaitFor(t, "the drop report", func() bool { return len(drops(u)) > 0 })
	ds := drops(u)
	d := ds[0]
	if len(ds) != 1 || d.Bytes <= 0 || !d.Reset || !errors.Is(d, uv.ErrDropped) || !errors.Is(d, cause) {
		t.Errorf("drop reports = %v, want one reset with bytes dropped matching ErrDropped and %v", ds, cause)
	}
}

// readToReset reads the peer until it fails, and checks it failed with a
// reset, not the clean end a loss must never look like.
func readToReset(t *testing.T, peer net.Conn) {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	n, err := io.Copy(io.Discard, peer)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("peer read %d bytes then %v, want ECONNRESET (a reset, not a clean end)", n, err)
	}
	if n >= lingerSize {
		t.Errorf("peer read all %d bytes although the close dropped some", n)
	}
}

// TestIOCloseLingers: Close right after a Send of much more than the
// socket takes, to a peer that reads slowly: Close returns at once, the
// peer reads every byte in order and then the end of the stream; nothing
// is reported, and the lingering close keeps Run going until it is over.
func TestIOCloseLingers(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		want := lingerData()
		base := v.u.Stats().Active
		v.sendAll(t, want)
		uv.UvtMust(t, v.io.Close())
		if a := v.u.Stats().Active; a <= base {
			t.Errorf("active while lingering = %d, want above %d: Run would end with bytes queued", a, base)
		}
		got := make([]byte, 0, len(want))
		buf := make([]byte, 32<<10)
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		for i := 0; ; i++ {
			if i%64 == 0 {
				time.Sleep(time.Millisecond) // a slow reader
			}
			n, err := v.peer.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			uv.UvtMust(t, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("peer read %d bytes, want the %d sent, in order", len(got), len(want))
		}
		uv.UvtWaitFor(t, "the lingering close to end", func() bool { return v.u.Stats().Active == base })
		if ds := drops(v.u); len(ds) > 0 {
			t.Errorf("drops reported after a complete linger: %v", ds)
		}
		in, out, _ := v.io.Stats()
		if in != 0 || out != uint64(len(want)) {
			t.Errorf("Stats = in %d, out %d; want 0, %d", in, out, len(want))
		}
		v.stop()
		uv.UvtShutdown(t, v.u, false)
	})
}

// TestIOCloseLingerTimesOut: Close after a Send to a peer that never
// reads, with a short linger time: the connection is reset, the peer reads
// ECONNRESET (never a clean end), and the drop is reported with its byte
// count, matching os.ErrDeadlineExceeded.
func TestIOCloseLingerTimesOut(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		base := v.u.Stats().Active
		uv.UvtMust(t, v.io.SetLinger(50*time.Millisecond))
		v.sendAll(t, lingerData())
		uv.UvtMust(t, v.io.Close())
		waitDrop(t, v.u, os.ErrDeadlineExceeded)
		readToReset(t, v.peer)
		uv.UvtWaitFor(t, "the lingering close to end", func() bool { return v.u.Stats().Active == base })
		v.stop()
		uv.UvtShutdown(t, v.u, true)
	})
}

// TestIOAbort: Abort with bytes queued resets the connection at once: the
// peer reads ECONNRESET, and the drop is reported, matching ErrAborted.
// Abort after Close cuts a lingering close short the same way, and Close
// with a linger time of 0 is Abort.
func TestIOAbort(t *testing.T) {
	for _, how := range []string{"open", "lingering", "linger0"} {
		t.Run(how, func(t *testing.T) {
			lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
				if how == "linger0" {
					uv.UvtMust(t, v.io.SetLinger(0))
				}
				v.sendAll(t, lingerData())
				switch how {
				case "lingering":
					uv.UvtMust(t, v.io.Close())
					if ds := drops(v.u); len(ds) > 0 {
						t.Fatalf("drops reported by Close within the linger time: %v", ds)
					}
					uv.UvtMust(t, v.io.Abort())
				case "linger0":
					uv.UvtMust(t, v.io.Close())
				default:
					uv.UvtMust(t, v.io.Abort())
				}
				waitDrop(t, v.u, uv.ErrAborted)
				readToReset(t, v.peer)
				v.stop()
				uv.UvtShutdown(t, v.u, true)
			})
		})
	}
}

// TestIOCloseLingerReactorClose: the reactor's Close with a lingering
// close pending (a peer that never reads) waits for it within its linger
// time, then resets it and reports the drop.
func TestIOCloseLingerReactorClose(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(200*time.Millisecond))
		v.sendAll(t, lingerData())
		uv.UvtMust(t, v.io.Close())
		v.stop()
		uv.UvtShutdown(t, v.u, true)
		waitDrop(t, v.u, os.ErrDeadlineExceeded)
		readToReset(t, v.peer)
	})
}

// TestIOCloseNothingQueued: Close with nothing queued ends the stream
// cleanly at once, as before: the peer reads what was sent, then the end
// of the stream; nothing is reported, nothing lingers. SetLinger after
// Close fails with ErrClosed.
func TestIOCloseNothingQueued(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(-1)) // the default again
		base := v.u.Stats().Active
		uv.UvtMust(t, v.io.Send([]byte("bye")))
		uv.UvtWaitFor(t, "the Send to go out", func() bool { return v.io.Queued() == 0 })
		uv.UvtMust(t, v.io.Close())
		if a := v.u.Stats().Active; a != base {
			t.Errorf("active after Close = %d, want %d: nothing lingers", a, base)
		}
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		got, err := io.ReadAll(v.peer)
		if err != nil || string(got) != "bye" {
			t.Errorf("peer read %q, %v; want \"bye\", then the end of the stream", got, err)
		}
		if err := v.io.SetLinger(time.Second); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("SetLinger after Close = %v, want ErrClosed", err)
		}
		v.stop()
		uv.UvtShutdown(t, v.u, false)
	})
}

// unixLingerPair returns an IO over one end of a Unix socket pair, and the
// other end as a net.Conn outside the reactor.
func unixLingerPair(t *testing.T, u *uv.UvtReactor) (*uv.IO, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	uv.UvtMust(t, err)
	c, err := uv.OpenPipe(u.Reactor, fds[0])
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		t.Fatalf("OpenPipe: %v", err)
	}
	f := os.NewFile(uintptr(fds[1]), "peer")
	peer, err := net.FileConn(f)
	f.Close()
	uv.UvtMust(t, err)
	t.Cleanup(func() { peer.Close() })
	return c, peer
}

// TestIOCloseLingersUnix: on a Unix socket, Close after a big Send lets
// the peer read every byte, then the end of the stream; a linger time that
// passes, and Abort, close at once (a Unix socket has no reset: the peer
// reads the end of the stream) and report the drop, not as a reset.
func TestIOCloseLingersUnix(t *testing.T) {
	for _, how := range []string{"complete", "timeout", "abort"} {
		t.Run(how, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				c, peer := unixLingerPair(t, u)
				want := lingerData()
				v := &lingerEnv{u: u, stop: stop, io: c, peer: peer}
				if how == "timeout" {
					uv.UvtMust(t, c.SetLinger(50*time.Millisecond))
				}
				v.sendAll(t, want)
				if how == "abort" {
					uv.UvtMust(t, c.Abort())
				} else {
					uv.UvtMust(t, c.Close())
				}
				if how != "complete" {
					uv.UvtWaitFor(t, "the drop report", func() bool { return len(drops(u)) > 0 })
				}
				peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				got, err := io.ReadAll(peer)
				if err != nil {
					t.Errorf("peer read %d bytes then %v, want the end of the stream", len(got), err)
				}
				ds := drops(u)
				if how == "complete" {
					if !bytes.Equal(got, want) || len(ds) > 0 {
						t.Errorf("peer read %d bytes (equal: %v), drops %v; want all %d, none dropped", len(got), bytes.Equal(got, want), ds, len(want))
					}
				} else {
					cause := os.ErrDeadlineExceeded
					if how == "abort" {
						cause = uv.ErrAborted
					}
					if len(ds) != 1 || ds[0].Bytes <= 0 || ds[0].Reset || !errors.Is(ds[0], cause) || len(got) >= len(want) {
						t.Errorf("drops %v, peer read %d of %d; want one drop matching %v, not a reset, and fewer bytes", ds, len(got), len(want), cause)
					}
				}
				stop()
				uv.UvtShutdown(t, u, how != "complete")
			})
		})
	}
}

// TestIOCloseLingerKeepsRun: a lingering close keeps Run going: Run,
// called once the IO is closed with bytes queued, returns only when every
// byte went to the socket, and the peer reads them all, then the end.
func TestIOCloseLingerKeepsRun(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		v.stop() // from here on only Run turns the loop
		v.ln.Close()
		want := lingerData()
		v.sendAll(t, want)
		uv.UvtMust(t, v.io.Close())
		got := make(chan []byte, 1)
		go func() {
			v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			b, _ := io.ReadAll(v.peer)
			got <- b
		}()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		uv.UvtMust(t, v.u.Run(ctx))
		if _, out, _ := v.io.Stats(); out != uint64(len(want)) {
			t.Errorf("Run returned with %d of %d bytes written: the lingering close did not keep it going", out, len(want))
		}
		if b := uv.UvtRecv(t, got, "the peer's read to the end"); !bytes.Equal(b, want) {
			t.Errorf("peer read %d bytes, want the %d sent, in order", len(b), len(want))
		}
		uv.UvtShutdown(t, v.u, false)
	})
}

// TestIOCloseLingerShutdownResets: a Shutdown whose context ends while a
// lingering close still waits for a peer that never reads resets it then:
// Shutdown returns (the linger time, an hour, is far from over), its error
// names the reset, the drop is reported by then, the peer reads
// ECONNRESET, Serve has ended and the IO's socket is closed.
func TestIOCloseLingerShutdownResets(t *testing.T) {
	lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
		uv.UvtMust(t, v.io.SetLinger(time.Hour))
		v.sendAll(t, lingerData())
		sockets := openSockets(t)
		closed := 1 // the IO's socket
		if _, ok := v.ln.(*uv.Listener); ok {
			closed++ // and the reactor's listener
		}
		uv.UvtMust(t, v.io.Close())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ended := make(chan error, 1)
		go func() { ended <- v.u.Shutdown(ctx) }()
		err := uv.UvtRecv(t, ended, "Shutdown's return, its context over and the linger time not")
		if !errors.Is(err, reactor.ErrCloseIncomplete) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reset: the lingering close of") {
			t.Errorf("Shutdown = %v, want ErrCloseIncomplete and DeadlineExceeded naming the reset", err)
		}
		if err != nil && strings.Contains(err.Error(), "waiting for") {
			t.Errorf("Shutdown = %v: names as still running what it reset", err)
		}
		ds := drops(v.u)
		if len(ds) != 1 || ds[0].Bytes <= 0 || !ds[0].Reset || !errors.Is(ds[0], uv.ErrDropped) || !errors.Is(ds[0], uv.ErrAborted) {
			t.Errorf("drop reports when Shutdown returned = %v, want one reset with bytes dropped matching ErrDropped and ErrAborted", ds)
		}
		readToReset(t, v.peer)
		v.stop() // Serve has ended: Shutdown stopped it
		uv.UvtShutdown(t, v.u, true)
		if n := openSockets(t); n != sockets-closed {
			t.Errorf("open sockets after Shutdown = %d, want %d (%d closed by it)", n, sockets-closed, closed)
		}
	})
}
