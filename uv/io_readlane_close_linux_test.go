package uv_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// The close of a connection with a read lane: whose Close closes the
// lane's file, the connection's last descriptor (io_readlane.go,
// closeHandedBack), and what every Close may rely on when it returns.

// closeWaitsOnLoop reports that a goroutine is inside an IO's Close,
// waiting for the loop to run its part (a Call queued behind the loop's
// work): the state a Close made on the loop meanwhile meets.
func closeWaitsOnLoop() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("uv.(*IO).Close(")) && bytes.Contains(g, []byte("reactor.(*Reactor).Call(")) {
			return true
		}
	}
	return false
}

// TestReadLaneCloseOnLoopWhileAGoroutineCloses: a Close made on the loop
// (a callback's, a function given to Call) that closes a connection with a
// read lane ends the connection before it returns, as every Close that
// closes the IO does, even when another goroutine's Close of the same IO
// waits, queued, for the loop meanwhile: the descriptors are gone when it
// returns, and the peer reads the end. (The loop must not leave the lane's
// file to a Close that has not closed anything yet, and may not for a
// while.)
func TestReadLaneCloseOnLoopWhileAGoroutineCloses(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s, before, gone := lanedPair(t, v)
		type onLoop struct {
			err     error
			sockets int
			queued  bool
		}
		res := make(chan onLoop, 1)
		running := make(chan struct{})
		uv.UvtMust(t, v.u.Reactor.Post(func() {
			close(running)
			// The goroutine's Close is queued behind this function.
			queued := false
			for deadline := time.Now().Add(uv.UvtSafety); !queued && time.Now().Before(deadline); {
				queued = closeWaitsOnLoop()
				if !queued {
					time.Sleep(100 * time.Microsecond)
				}
			}
			err := s.Close()
			res <- onLoop{err: err, sockets: uv.UvtOpenSockets(t), queued: queued}
		}))
		<-running
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		got := uv.UvtRecv(t, res, "the loop's Close")
		if !got.queued {
			t.Fatalf("the goroutine's Close never waited for the loop")
		}
		uv.UvtMust(t, got.err)
		if got.sockets != before-gone {
			t.Errorf("%d sockets open when the loop's Close returned, want %d: the connection did not end", got.sockets, before-gone)
		}
		uv.UvtMust(t, uv.UvtRecv(t, closed, "the goroutine's Close"))
		if got := uv.UvtOpenSockets(t); got != before-gone {
			t.Errorf("%d sockets open after both Closes returned, want %d", got, before-gone)
		}
		c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("the peer's Read after the close = %d, %v; want the end of the stream", n, err)
		}
		v.finish(t, c)
	})
}

// lanedPair makes a connection whose server end s has its read lane (the
// client c read a byte through it), and returns the sockets the process
// holds then and how many of them are s's: its socket (on the libuv
// driver an accepted connection is unopened in libuv, the lane's file
// owning its socket), or libuv's descriptor and the lane's duplicate.
func lanedPair(t *testing.T, v *ioEnv) (c, s *uv.IO, sockets, of int) {
	t.Helper()
	c, s = v.pair(t)
	makeLane(t, s, c)
	return c, s, uv.UvtOpenSockets(t), uv.UvtIODescriptors(s)
}

// socketInode is the inode of the socket at the other end of peer, a
// loopback IPv4 connection of this process (from /proc/net/tcp): the
// descriptors naming it can be counted after its close, whoever holds them.
func socketInode(t *testing.T, peer net.Conn) string {
	t.Helper()
	la, ra := peer.LocalAddr().(*net.TCPAddr), peer.RemoteAddr().(*net.TCPAddr)
	// The other end's local address is the peer's remote one.
	local := fmt.Sprintf("0100007F:%04X", ra.Port)
	rem := fmt.Sprintf("0100007F:%04X", la.Port)
	f, err := os.Open("/proc/net/tcp")
	uv.UvtMust(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 10 && fs[1] == local && fs[2] == rem && fs[9] != "0" {
			return fs[9]
		}
	}
	t.Fatalf("no socket %s -> %s in /proc/net/tcp", local, rem)
	return ""
}

// inodeFDs counts this process's descriptors naming socket ino.
func inodeFDs(ino string) int {
	ents, _ := os.ReadDir("/proc/self/fd")
	want := "socket:[" + ino + "]"
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target == want {
			n++
		}
	}
	return n
}

// fdCanary holds descriptors of its own while the process opens and
// closes others, and reports any that was closed or replaced under it:
// what a second close of a descriptor number already closed and reused
// (or a close of a number the closer no longer owns) does to whoever got
// the number meanwhile.
type fdCanary struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	bad     []string
	rounds  int
	holding [][2]int
	inodes  [][2]uint64
}

func startFDCanary() *fdCanary {
	k := &fdCanary{stop: make(chan struct{}), done: make(chan struct{})}
	go k.run()
	return k
}

func (k *fdCanary) run() {
	defer close(k.done)
	rng := rand.New(rand.NewPCG(7, 7))
	const hold = 16
	for {
		select {
		case <-k.stop:
			for _, p := range k.holding {
				unix.Close(p[0])
				unix.Close(p[1])
			}
			return
		default:
		}
		if len(k.holding) < hold {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				continue // EMFILE for a moment: try again
			}
			var a, b unix.Stat_t
			unix.Fstat(fds[0], &a)
			unix.Fstat(fds[1], &b)
			k.holding = append(k.holding, fds)
			k.inodes = append(k.inodes, [2]uint64{a.Ino, b.Ino})
		}
		for i, p := range k.holding {
			for j := range 2 {
				var st unix.Stat_t
				if err := unix.Fstat(p[j], &st); err != nil || st.Ino != k.inodes[i][j] {
					k.mu.Lock()
					k.bad = append(k.bad, fmt.Sprintf("descriptor %d (inode %d): fstat = inode %d, %v", p[j], k.inodes[i][j], st.Ino, err))
					k.mu.Unlock()
					k.inodes[i][j] = st.Ino // once
				}
			}
		}
		if i := rng.IntN(hold); i < len(k.holding) {
			unix.Close(k.holding[i][0])
			unix.Close(k.holding[i][1])
			k.holding = append(k.holding[:i], k.holding[i+1:]...)
			k.inodes = append(k.inodes[:i], k.inodes[i+1:]...)
		}
		k.rounds++
		runtime.Gosched()
	}
}

// finish stops the canary and returns what it saw.
func (k *fdCanary) finish() (bad []string, rounds int) {
	close(k.stop)
	<-k.done
	return k.bad, k.rounds
}

// laneCloseCase is how one connection of TestReadLaneCloseStress closes,
// and what runs meanwhile.
type laneCloseCase struct {
	how       string
	reader    bool // a Read waits in the lane as the IO closes
	writer    bool // a Write streams out as the IO closes
	peerSends bool // the peer sends while a Read waits
}

// laneCloseHows: the ways a connection with a read lane closes.
var laneCloseHows = []string{
	"close",       // one goroutine's Close
	"closes",      // four goroutines' Closes at once
	"abort",       // Abort
	"abort+close", // Abort and Close at once
	"loop",        // Close in a function the loop runs
	"loop+close",  // that and a goroutine's Close at once
	"retained",    // Close of an event another holder retained
	"linger",      // Close with bytes queued: a lingering close
	"setlinger0",  // SetLinger(0) then Close: a reset
	"dropped",     // no Close: the collector's cleanup closes it
}

// TestReadLaneCloseStress: connections with read lanes (accepted, so with
// one from the start) close every way they can (one or several Closes,
// Abort, on the loop, a lingering close, a reset, the collector's cleanup,
// and these at once), with a Read waiting in the lane, a Write streaming
// out and the peer sending meanwhile. Every close ends the connection: a
// Close that returns (alone, or the last of several) leaves no
// descriptor of the socket open (but for a lingering close's, which
// flushes first), the waiting Read fails with ErrClosed (or has the bytes
// the peer sent), never hangs, the Write ends, the peer reads the end
// (every byte of a lingering close first); and once all is closed the
// process holds the sockets it held before, the libuv driver's duplicates
// are all given back, and no descriptor of anyone else's was closed or
// replaced on the way (a canary holding descriptors while the connections
// close).
func TestReadLaneCloseStress(t *testing.T) {
	conns, par := 300, 8
	if uv.UvtInstrumented() != "" || testing.Short() {
		conns = 120
	}
	baseSockets := uv.UvtOpenSockets(t)
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		dups := uv.UvtLaneDups()
		canary := startFDCanary()
		var acceptMu sync.Mutex
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
		var cases []laneCloseCase
		for i := range conns {
			cases = append(cases, laneCloseCase{
				how:       laneCloseHows[i%len(laneCloseHows)],
				reader:    rng.IntN(3) > 0,
				writer:    rng.IntN(3) == 0,
				peerSends: rng.IntN(4) == 0,
			})
		}
		var inodes []string
		var inoMu sync.Mutex
		var failures atomic.Int32
		work := make(chan laneCloseCase)
		var wg sync.WaitGroup
		for range par {
			goWG(&wg, func() {
				for cs := range work {
					if failures.Load() > 3 {
						continue // enough said: the rest only drain
					}
					ino := laneCloseOne(t, v, &acceptMu, cs)
					inoMu.Lock()
					if ino != "" {
						inodes = append(inodes, ino)
					}
					inoMu.Unlock()
					if t.Failed() {
						failures.Add(1)
					}
				}
			})
		}
		for _, cs := range cases {
			work <- cs
		}
		close(work)
		wg.Wait()
		// The dropped connections close once collected.
		UvtWaitCollected(t, "every connection's sockets closed", func() bool {
			for _, ino := range inodes {
				if inodeFDs(ino) != 0 {
					return false
				}
			}
			return true
		})
		bad, rounds := canary.finish()
		for _, b := range bad {
			t.Errorf("a descriptor of another's closed or replaced while the connections closed: %s", b)
		}
		t.Logf("%d connections; canary rounds %d", len(cases), rounds)
		v.ln.Close()
		v.stop()
		uv.UvtShutdown(t, v.u, true)
		for _, r := range v.u.Reports() {
			// An Abort after a Close cuts a lingering close short (a
			// Write streaming out left bytes queued): its drop is reported.
			if !errors.Is(r.Err, uv.ErrDropped) {
				t.Errorf("report %v, want only drops", r)
			}
		}
		if got := uv.UvtLaneDups(); got != dups {
			t.Errorf("the read lanes hold %d duplicates after every connection closed, want %d", got, dups)
		}
	})
	// No more than before: a socket another test left closing (in a
	// -shuffle run) may be gone by now, which is no leak of this test's.
	if got := uv.UvtOpenSockets(t); got > baseSockets {
		t.Errorf("%d sockets open after the test, want at most %d as before it", got, baseSockets)
	}
}

// UvtWaitCollected polls cond, running the collector between looks, until
// it holds, failing at the safety deadline.
func UvtWaitCollected(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(uv.UvtSafety)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s before the safety deadline", what)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// laneCloseOne is one connection of TestReadLaneCloseStress; it returns
// the inode of the connection's socket.
func laneCloseOne(t *testing.T, v *ioEnv, acceptMu *sync.Mutex, cs laneCloseCase) string {
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	acceptMu.Lock()
	peer, err := net.Dial("tcp4", v.ln.Addr().String())
	if err != nil {
		acceptMu.Unlock()
		t.Errorf("Dial: %v", err)
		return ""
	}
	defer peer.Close()
	s, err := v.ln.AcceptIO(ctx)
	acceptMu.Unlock()
	if err != nil {
		t.Errorf("AcceptIO: %v", err)
		return ""
	}
	ino := socketInode(t, peer)
	what := fmt.Sprintf("%+v", cs)
	if cs.how == "dropped" {
		// Nobody holds s any more: its cleanup closes it (an accepted
		// connection is not started, so the collector may take it).
		if uv.UvtReadLane(s) == "none" {
			t.Errorf("%s: an accepted connection without a read lane", what)
		}
		s = nil
		return ino
	}
	// The peer reads everything to the end.
	peerRead := make(chan error, 1)
	var peerGot atomic.Int64
	go func() {
		peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		n, err := io.Copy(io.Discard, peer)
		peerGot.Store(n)
		peerRead <- err
	}()
	var reading <-chan error
	var readBytes atomic.Int64
	if cs.reader {
		ch := make(chan error, 1)
		reading = ch
		go func() {
			n, err := s.Read(make([]byte, 64))
			readBytes.Store(int64(n))
			ch <- err
		}()
		laneWaiting(s)
	}
	if cs.peerSends {
		peer.Write([]byte("stray"))
	}
	var writing <-chan error
	if cs.writer {
		ch := make(chan error, 1)
		writing = ch
		go func() {
			p := make([]byte, 64<<10)
			for {
				if _, err := s.Write(p); err != nil {
					ch <- err
					return
				}
			}
		}()
	}
	const lingered = 1 << 20
	if cs.how == "linger" {
		uv.UvtMust(t, s.SetLinger(uv.UvtSafety))
		uv.UvtMust(t, s.Send(make([]byte, lingered)))
	}
	if cs.how == "setlinger0" {
		uv.UvtMust(t, s.SetLinger(0))
	}
	// immediate: the close's return leaves no descriptor of the socket.
	immediate := !cs.writer && cs.how != "linger"
	checkGone := func(when string) {
		if n := inodeFDs(ino); n != 0 && immediate {
			t.Errorf("%s: %d descriptors of the socket open %s", what, n, when)
		}
	}
	abortErr := func(err error) {
		if err != nil && !errors.Is(err, uv.ErrAborted) {
			t.Errorf("%s: Abort = %v", what, err)
		}
	}
	closeErr := func(err error) {
		if err != nil && !errors.Is(err, uv.ErrDropped) {
			t.Errorf("%s: Close = %v", what, err)
		}
	}
	switch cs.how {
	case "close", "linger", "setlinger0":
		closeErr(s.Close())
		checkGone("when Close returned")
	case "closes":
		var wg sync.WaitGroup
		for range 4 {
			goWG(&wg, func() { closeErr(s.Close()) })
		}
		wg.Wait()
		checkGone("when the Closes returned")
	case "abort":
		abortErr(s.Abort())
		checkGone("when Abort returned")
	case "abort+close":
		var wg sync.WaitGroup
		goWG(&wg, func() { abortErr(s.Abort()) })
		goWG(&wg, func() { closeErr(s.Close()) })
		wg.Wait()
		checkGone("when Abort and Close returned")
	case "loop":
		uv.UvtMust(t, v.u.Reactor.Call(func() {
			closeErr(s.Close())
			checkGone("when Close returned on the loop")
		}))
	case "loop+close":
		var wg sync.WaitGroup
		goWG(&wg, func() { uv.UvtMust(t, v.u.Reactor.Call(func() { closeErr(s.Close()) })) })
		goWG(&wg, func() { closeErr(s.Close()) })
		wg.Wait()
		checkGone("when both Closes returned")
	case "retained":
		s.Retain()
		closeErr(s.Close())
		checkGone("when Close returned")
		s.Dispose()
	}
	if n, err := s.Read(make([]byte, 1)); n != 0 || !errors.Is(err, uv.ErrClosed) {
		t.Errorf("%s: a Read after Close = %d, %v; want ErrClosed", what, n, err)
	}
	if reading != nil {
		err := uv.UvtRecv(t, reading, what+": the waiting Read's end")
		switch {
		case errors.Is(err, uv.ErrClosed) && readBytes.Load() == 0:
		case cs.peerSends && err == nil && readBytes.Load() > 0:
		default:
			t.Errorf("%s: a Read waiting as the IO closed = %d, %v; want ErrClosed", what, readBytes.Load(), err)
		}
	}
	if writing != nil {
		if err := uv.UvtRecv(t, writing, what+": the streaming Write's end"); err == nil {
			t.Errorf("%s: a Write of a closed IO succeeded", what)
		}
	}
	err = uv.UvtRecv(t, peerRead, what+": the peer's end")
	aborted := cs.how == "abort" || cs.how == "setlinger0"
	reset := aborted || cs.how == "abort+close" // the Abort may come first, or after the Close (then nothing)
	switch {
	case err == nil: // the end of the stream
		if aborted && !cs.writer {
			// A reset's peer may read the end only when the reset came
			// after a FIN (not here: nothing else closes it first).
			t.Errorf("%s: the peer read a clean end after an Abort", what)
		}
	case errors.Is(err, syscall.ECONNRESET):
		if !reset && !cs.peerSends && !cs.writer {
			t.Errorf("%s: the peer's connection was reset by a Close", what)
		}
	default:
		t.Errorf("%s: the peer's read = %v, want the end of the stream", what, err)
	}
	// (Bytes the peer sent that nobody read make the kernel's close a
	// reset, which drops what the socket still held, as package net's
	// close does.)
	if cs.how == "linger" && !cs.writer && !cs.peerSends && (err != nil || peerGot.Load() != lingered) {
		t.Errorf("%s: the peer read %d bytes then %v, want the %d bytes lingered then the end", what, peerGot.Load(), err, lingered)
	}
	if n := inodeFDs(ino); n != 0 && cs.how != "linger" && !cs.writer {
		t.Errorf("%s: %d descriptors of the socket open once the peer read the end", what, n)
	}
	return ino
}

// TestReadLaneClosedInItsOwnCallback: an IO with a read lane closed by one
// of its own callbacks closes once the callbacks' pass is over (the event
// lets go of what it holds then), and the loop closes the lane's file: no
// descriptor is left, the peer reads the end, and the libuv driver's
// duplicate is given back.
func TestReadLaneClosedInItsOwnCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		dups := uv.UvtLaneDups()
		c, s, before, gone := lanedPair(t, v)
		closed := make(chan error, 1)
		_, err := s.OnRead(func(p []byte, err error) {
			select {
			case closed <- s.Close():
			default:
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, s.Start())
		_, err = c.Write([]byte("x"))
		uv.UvtMust(t, err)
		uv.UvtMust(t, uv.UvtRecv(t, closed, "the callback's Close"))
		uv.UvtWaitFor(t, "the connection's sockets closed", func() bool { return uv.UvtOpenSockets(t) == before-gone })
		if got := uv.UvtLaneCloser(s); got != "loop" {
			t.Errorf("the lane's file closed by %q, want the loop's", got)
		}
		c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("the peer's Read after the close = %d, %v; want the end of the stream", n, err)
		}
		v.finish(t, c)
		if got := uv.UvtLaneDups(); got != dups {
			t.Errorf("the read lanes hold %d duplicates, want %d", got, dups)
		}
	})
}

// TestReadLaneClosesRaceReactorClose: connections with read lanes, a Read
// waiting in each, are closed (Close, Abort, two Closes) by goroutines of
// their own while the reactor closes: every call returns, every waiting
// Read fails with ErrClosed, and once they have returned no socket of the
// reactor's is open and the libuv driver's duplicates are all given back,
// whichever close came first.
func TestReadLaneClosesRaceReactorClose(t *testing.T) {
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			base := uv.UvtOpenSockets(t)
			dups := uv.UvtLaneDups()
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				const conns = 24
				var peers []net.Conn
				var ss []*uv.IO
				var readers []<-chan error
				for range conns {
					ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
					peer, err := net.Dial("tcp4", v.ln.Addr().String())
					uv.UvtMust(t, err)
					s, err := v.ln.AcceptIO(ctx)
					cancel()
					uv.UvtMust(t, err)
					peers = append(peers, peer)
					ss = append(ss, s)
					readers = append(readers, readWaiting(s))
				}
				var wg sync.WaitGroup
				for i, s := range ss {
					switch i % 3 {
					case 0:
						goWG(&wg, func() { s.Close() })
					case 1:
						goWG(&wg, func() { s.Abort() })
					case 2:
						goWG(&wg, func() { s.Close() })
						goWG(&wg, func() { s.Close() })
					}
				}
				goWG(&wg, func() { v.u.Close() })
				wg.Wait()
				for i, r := range readers {
					if err := uv.UvtRecv(t, r, "a waiting Read's end"); !errors.Is(err, uv.ErrClosed) {
						t.Errorf("conn %d: a Read waiting as the IO closed = %v, want ErrClosed", i, err)
					}
				}
				for _, p := range peers {
					p.Close()
				}
				if got := uv.UvtOpenSockets(t); got != base {
					t.Errorf("%d sockets open once every close returned, want %d", got, base)
				}
				if got := uv.UvtLaneDups(); got != dups {
					t.Errorf("the read lanes hold %d duplicates, want %d", got, dups)
				}
				v.stop()
				uv.UvtShutdown(t, v.u, true)
			})
		})
	}
}

// TestReadLaneCloseReentrantAndUnserved: the Close of a connection with a
// read lane ends it before returning when a callback the close notifies
// closes the IO again (on the loop, inside the first Close), and when no
// loop runs (the Close takes the loop for itself); the lane's file is the
// caller's to close in both.
func TestReadLaneCloseReentrantAndUnserved(t *testing.T) {
	for _, how := range []string{"reentrant", "unserved"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				c, s, before, gone := lanedPair(t, v)
				inner := make(chan error, 1)
				switch how {
				case "reentrant":
					_, err := s.OnRead(func(p []byte, err error) {
						if errors.Is(err, event.ErrClosed) {
							inner <- s.Close()
						}
					}, event.WithClose)
					uv.UvtMust(t, err)
				case "unserved":
					v.stop()
					inner <- nil
				}
				uv.UvtMust(t, s.Close())
				if got := uv.UvtOpenSockets(t); got != before-gone {
					t.Errorf("%d sockets open when Close returned, want %d", got, before-gone)
				}
				if got := uv.UvtLaneCloser(s); got != "closer" {
					t.Errorf("the lane's file closed by %q, want Close's caller", got)
				}
				uv.UvtMust(t, uv.UvtRecv(t, inner, "the Close inside the close"))
				if how == "unserved" {
					v.stop = uv.UvtServe(t, v.u)
				}
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Errorf("the peer's Read after the close = %d, %v; want the end of the stream", n, err)
				}
				v.finish(t, c)
			})
		})
	}
}
