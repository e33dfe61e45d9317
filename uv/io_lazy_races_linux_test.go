package uv_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Races on the libuv driver's unopened accepted connection
// (uv/io_lazy_uv.go): every transition between unopened and opened while
// goroutines read and write through the lanes, closes racing the open,
// and an open that cannot get its duplicate. They run on both drivers.

// mergeable reports whether want is an interleaving of the segments of a
// and of b, each kept in its order: no byte lost, doubled or reordered
// within a consumer.
func mergeable(want []byte, a, b [][]byte) bool {
	type key struct{ i, j int }
	seen := map[key]bool{}
	var walk func(i, j, pos int) bool
	walk = func(i, j, pos int) bool {
		if i == len(a) && j == len(b) {
			return pos == len(want)
		}
		if seen[key{i, j}] {
			return false
		}
		seen[key{i, j}] = true
		if i < len(a) && bytes.HasPrefix(want[pos:], a[i]) && walk(i+1, j, pos+len(a[i])) {
			return true
		}
		return j < len(b) && bytes.HasPrefix(want[pos:], b[j]) && walk(i, j+1, pos+len(b[j]))
	}
	return walk(0, 0, 0)
}

// TestLazyTransitionsKeepTheStreams: an accepted connection read by
// a goroutine's blocking Reads (its lane) while another goroutine starts
// and stops it with a callback (the first Start opens it in libuv over a
// duplicate) and a third writes to the peer through its write lane, in
// writes large enough that libuv must queue some (which opens it too):
// the bytes the Reads and the callbacks got are the peer's stream, each
// once, in order, and the peer reads exactly what the server wrote.
func TestLazyTransitionsKeepTheStreams(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		for round := range 6 {
			lazyTransitionsRound(t, v, round)
			if t.Failed() {
				break
			}
		}
		v.finish(t)
	})
}

func lazyTransitionsRound(t *testing.T, v *ioEnv, round int) {
	c, s := v.pair(t)
	rng := rand.New(rand.NewPCG(uint64(round), 11))
	in := make([]byte, 2<<20)
	out := make([]byte, 3<<20)
	for i := range in {
		in[i] = byte(rng.Uint32())
	}
	for i := range out {
		out[i] = byte(rng.Uint32())
	}
	var wg sync.WaitGroup
	// The peer: writes in, then ends its side; reads everything.
	goWG(&wg, func() {
		for off := 0; off < len(in); {
			n := min(1+rand.IntN(40000), len(in)-off)
			if _, err := c.Write(in[off : off+n]); err != nil {
				t.Errorf("peer Write: %v", err)
				return
			}
			off += n
		}
		if err := c.CloseWrite(); err != nil {
			t.Errorf("peer CloseWrite: %v", err)
		}
	})
	var peerGot []byte
	goWG(&wg, func() {
		b := make([]byte, 50000)
		for {
			n, err := c.Read(b[:1+rand.IntN(len(b))])
			peerGot = append(peerGot, b[:n]...)
			if err != nil {
				if err != io.EOF {
					t.Errorf("peer Read: %v", err)
				}
				return
			}
			if rand.IntN(20) == 0 {
				time.Sleep(time.Millisecond) // the server's writes queue
			}
		}
	})
	// The server's writer: blocking Writes, some small (the lane), some
	// large (libuv queues the rest), then its end.
	goWG(&wg, func() {
		for off := 0; off < len(out); {
			n := min(1+rand.IntN(200), len(out)-off)
			if rand.IntN(8) == 0 {
				n = min(1+rand.IntN(600000), len(out)-off)
			}
			if _, err := s.Write(out[off : off+n]); err != nil {
				t.Errorf("server Write: %v", err)
				return
			}
			off += n
		}
		if err := s.CloseWrite(); err != nil {
			t.Errorf("server CloseWrite: %v", err)
		}
	})
	// The server's reader and the callbacks.
	var mu sync.Mutex
	var bySegs, cbSegs [][]byte
	var ended atomic.Bool
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		b := make([]byte, 70000)
		for {
			n, err := s.Read(b[:1+rand.IntN(len(b))])
			if n > 0 {
				mu.Lock()
				bySegs = append(bySegs, bytes.Clone(b[:n]))
				mu.Unlock()
			}
			if err != nil {
				if err != io.EOF {
					t.Errorf("server Read: %v", err)
				}
				ended.Store(true)
				return
			}
		}
	}()
	cb := func(p []byte, err error) {
		if len(p) > 0 {
			mu.Lock()
			cbSegs = append(cbSegs, bytes.Clone(p))
			mu.Unlock()
		}
	}
	var sub *event.Callback
	toggles := 0
	for !ended.Load() {
		uv.UvtMust(t, v.u.Call(func() {
			if sub == nil {
				var err error
				sub, err = s.OnRead(cb)
				uv.UvtMust(t, err)
				uv.UvtMust(t, s.Start())
			} else {
				uv.UvtMust(t, s.Stop())
				uv.UvtMust(t, s.DelCallback(sub))
				sub = nil
			}
		}))
		toggles++
		switch rand.IntN(3) {
		case 0:
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		case 1:
			s.SetReadDeadline(time.Now().Add(time.Hour)) // to the lane and back
			s.SetReadDeadline(time.Time{})
		}
		if toggles > 20000 {
			t.Errorf("the server's reads never ended")
			break
		}
	}
	if sub != nil {
		v.u.Call(func() { s.Stop(); s.DelCallback(sub) })
	}
	uv.UvtRecv(t, readDone, "the server's reads to end")
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !mergeable(in, bySegs, cbSegs) {
		var all []byte
		for _, p := range bySegs {
			all = append(all, p...)
		}
		for _, p := range cbSegs {
			all = append(all, p...)
		}
		t.Errorf("round %d: the server's Reads (%d segments) and callbacks (%d) are no interleaving of the peer's %d bytes (got %d bytes in all)",
			round, len(bySegs), len(cbSegs), len(in), len(all))
	}
	if diff := cmp.Diff(len(out), len(peerGot)); diff != "" || !bytes.Equal(out, peerGot) {
		i := 0
		for i < len(out) && i < len(peerGot) && out[i] == peerGot[i] {
			i++
		}
		t.Errorf("round %d: the peer read %d bytes, want %d; differs from byte %d", round, len(peerGot), len(out), i)
	}
	t.Logf("round %d: %d toggles, %d Read segments, %d callback segments, opened in libuv %v", round, toggles, len(bySegs), len(cbSegs),
		v.u.Driver() == reactor.DriverLibuv && uv.UvtOpenedInLibuv(s))
	c.Close()
	s.Close()
}

// lazyCloseHows: what races an accepted connection's opening in libuv.
var lazyCloseHows = []string{"close", "abort", "setlinger0", "closewrite+close"}

// TestLazyCloseRacesOpen: an accepted connection, a Read waiting in
// its lane, is opened in libuv (a Start, keep-alive, a large Write) while
// another goroutine closes it (Close, Abort, SetLinger(0) and Close,
// CloseWrite then Close): the Read ends, the peer reads the end (or a
// reset), no socket is left open, and no descriptor of anyone else's is
// closed or replaced (the canary).
func TestLazyCloseRacesOpen(t *testing.T) {
	baseSockets := uv.UvtOpenSockets(t)
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		canary := startFDCanary()
		big := make([]byte, 4<<20)
		for i := range 150 {
			how := lazyCloseHows[i%len(lazyCloseHows)]
			c, s := v.pair(t)
			readEnded := make(chan error, 1)
			go func() {
				_, err := s.Read(make([]byte, 10))
				readEnded <- err
			}()
			var wg sync.WaitGroup
			switch i % 3 {
			case 0:
				goWG(&wg, func() {
					v.u.Call(func() {
						s.OnRead(func([]byte, error) {})
						s.Start()
					})
				})
			case 1:
				goWG(&wg, func() { s.SetKeepAlive(true) })
			case 2:
				goWG(&wg, func() { s.Write(big) })
			}
			goWG(&wg, func() {
				if rand.IntN(2) == 0 {
					time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				}
				switch how {
				case "close":
					s.Close()
				case "abort":
					s.Abort()
				case "setlinger0":
					s.SetLinger(0)
					s.Close()
				case "closewrite+close":
					go s.CloseWrite()
					s.Close()
				}
			})
			wg.Wait()
			select {
			case <-readEnded:
			case <-time.After(uv.UvtSafety):
				t.Fatalf("%s: the lane's Read never ended", how)
			}
			c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
			buf := make([]byte, 64<<10)
			for {
				_, err := c.Read(buf)
				if err != nil {
					if err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
						t.Errorf("%s: the peer's Read = %v, want the end or a reset", how, err)
					}
					break
				}
			}
			c.Close()
			if t.Failed() {
				break
			}
		}
		bad, rounds := canary.finish()                                                                         // its socket pairs closed too
		uv.UvtWaitFor(t, "the sockets to close", func() bool { return uv.UvtOpenSockets(t) <= baseSockets+1 }) // the listener
		for _, b := range bad {
			t.Errorf("a descriptor of another's closed or replaced: %s", b)
		}
		t.Logf("canary rounds %d", rounds)
		v.ln.Close()
		v.stop()
		uv.UvtShutdown(t, v.u, true)
		for _, r := range v.u.Reports() {
			// An Abort (or SetLinger(0)) while a large Write was queued
			// drops its rest: reported.
			if !errors.Is(r.Err, uv.ErrDropped) {
				t.Errorf("report %v, want only drops", r)
			}
		}
	})
}

// TestLazyOpenWithoutDescriptors: with every descriptor taken, an
// accepted connection with a read lane that must be opened in libuv (a
// Start, keep-alive, CloseWrite) cannot get its duplicate: each fails
// with a clear error (EMFILE), nothing is leaked, and once descriptors
// are back the connection (and the reactor) go on. In a child process
// whose lowered RLIMIT_NOFILE touches nothing else.
func TestLazyOpenWithoutDescriptors(t *testing.T) {
	if inChild(t, "UVEVENT_LAZY_EMFILE_CHILD") {
		conform.EachDriver(t, lazyOpenWithoutDescriptorsChild)
	}
}

func lazyOpenWithoutDescriptorsChild(t *testing.T, d reactor.Driver) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	defer stop()
	ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer ln.Close()
	s, peer := acceptFrom(t, ln)
	// Through the lane first.
	peer.Write([]byte("a"))
	if got := readN(t, s, 1); string(got) != "a" {
		t.Fatalf("Read = %q", got)
	}
	release := starveDescriptors(t)
	var cbErrs []error
	var cbBytes []byte
	var mu sync.Mutex
	var startErr error
	uv.UvtMust(t, u.Call(func() {
		_, err := s.OnRead(func(p []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			cbBytes = append(cbBytes, p...)
			if err != nil {
				cbErrs = append(cbErrs, err)
			}
		})
		uv.UvtMust(t, err)
		startErr = s.Start()
	}))
	kaErr := s.SetKeepAlive(true)
	peer.Write([]byte("b"))
	time.Sleep(50 * time.Millisecond)
	release()
	mu.Lock()
	t.Logf("Start = %v, SetKeepAlive = %v, callbacks' errors %v, bytes %q", startErr, kaErr, cbErrs, cbBytes)
	failed := startErr != nil || len(cbErrs) > 0
	mu.Unlock()
	if d == reactor.DriverLibuv {
		if !failed || !errors.Is(startErr, syscall.EMFILE) {
			t.Errorf("Start with no descriptor left for the duplicate = %v, want EMFILE", startErr)
		}
		if kaErr != nil {
			t.Errorf("SetKeepAlive with no descriptor left = %v, want nil: keep-alive is set on the socket, no descriptor needed", kaErr)
		}
	}
	// Descriptors back: does the connection go on? Stop, and read the
	// rest with a Read; write to the peer.
	uv.UvtMust(t, u.Call(func() { s.Stop() }))
	peer.Write([]byte("d"))
	if got := readN(t, s, 1); string(got) != "d" && string(got) != "b" {
		t.Errorf("Read after the descriptors came back = %q, want the peer's next bytes", got)
	}
	if _, err := s.Write([]byte("c")); err != nil {
		t.Errorf("Write after the descriptors came back: %v", err)
	}
	peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	b := make([]byte, 1)
	if _, err := io.ReadFull(peer, b); err != nil || b[0] != 'c' {
		t.Errorf("the peer's Read = %q, %v", b, err)
	}
	if err := s.SetKeepAlive(true); err != nil {
		t.Errorf("SetKeepAlive after the descriptors came back: %v", err)
	}
	// The reactor goes on: another connection.
	s2, peer2 := acceptFrom(t, ln)
	peer2.Write([]byte("z"))
	if got := readN(t, s2, 1); string(got) != "z" {
		t.Errorf("the next connection's Read = %q", got)
	}
	s2.Close()
	s.Close()
}

// TestLazyWriteWithoutDescriptors: with every descriptor taken, a
// blocking Write larger than the socket takes, on an accepted connection
// with a read lane, needs libuv for its rest (an opening over a
// duplicate, which fails): the Write ends with the bytes that went out
// and an error; once descriptors are back, Writes go on, and the peer
// reads exactly what the Writes said they wrote. In a child process.
func TestLazyWriteWithoutDescriptors(t *testing.T) {
	if inChild(t, "UVEVENT_LAZY_WEMFILE_CHILD") {
		conform.EachDriver(t, lazyWriteWithoutDescriptorsChild)
	}
}

func lazyWriteWithoutDescriptorsChild(t *testing.T, d reactor.Driver) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	defer stop()
	ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer ln.Close()
	s, peer := acceptFrom(t, ln)
	defer s.Close()
	peer.Write([]byte("a"))
	readN(t, s, 1) // the read lane holds the socket
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	release := starveDescriptors(t)
	s.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
	n, werr := s.Write(big)
	release()
	t.Logf("Write with no descriptor left = %d, %v", n, werr)
	if werr == nil {
		t.Fatalf("Write of 8 MiB to a peer that reads nothing, with a deadline, = %d, nil", n)
	}
	var got []byte
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 1<<16)
		for {
			k, err := peer.Read(b)
			got = append(got, b[:k]...)
			if err != nil {
				done <- err
				return
			}
		}
	}()
	s.SetWriteDeadline(time.Time{})
	if _, err := s.Write([]byte("tail")); err != nil {
		t.Errorf("Write once the descriptors are back: %v", err)
	}
	uv.UvtMust(t, s.CloseWrite())
	if err := uv.UvtRecv(t, done, "the peer's end"); err != io.EOF {
		t.Errorf("the peer's Read ended with %v, want EOF", err)
	}
	want := append(bytes.Clone(big[:n]), "tail"...)
	if !bytes.Equal(got, want) {
		t.Errorf("the peer read %d bytes, want %d (the %d the Write reported, then the tail)", len(got), len(want), n)
	}
}
