package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The read lane under stress: blocking Reads of a connection, taken on
// the caller's goroutine, mixed with the loop's readers, closes, resets,
// deadlines and collections (io_readlane.go).

// laneWaiting waits until a Read holds c's read lane (it reads or waits
// in the netpoller); false when none came to it before a while (the Read
// went to the loop, or has not begun yet): the tests check either case.
func laneWaiting(c *uv.IO) bool {
	for range 200 {
		if s := uv.UvtReadLane(c); s == "busy" || s == "wanted" {
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
	return false
}

// makeLane gives c its read lane: a first blocking Read (through the
// loop) of a byte s writes.
func makeLane(t *testing.T, c, s *uv.IO) {
	t.Helper()
	_, err := s.Write([]byte{0xAA})
	uv.UvtMust(t, err)
	if b := readN(t, c, 1); b[0] != 0xAA {
		t.Fatalf("first Read = %#x, want 0xaa", b[0])
	}
	if l := uv.UvtReadLane(c); l == "none" {
		t.Fatalf("no read lane after a blocking Read")
	}
}

// readWaiting starts a Read of c's next byte, which nobody sends, and
// waits until it holds the lane (or a while): its error comes on the
// channel.
func readWaiting(c *uv.IO) <-chan error {
	waiting := make(chan error, 1)
	go func() {
		n, err := c.Read(make([]byte, 1))
		if n != 0 {
			err = errors.New("a byte nobody sent")
		}
		waiting <- err
	}()
	laneWaiting(c)
	return waiting
}

// randomPattern is n bytes of a seeded generator: a run of a few bytes of
// it is found at one place only, so that two reads' order can be told.
func randomPattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestReadLaneMixedReaders: while the peer streams a known pattern,
// blocking Reads (the lane), the callbacks of a started IO, read requests
// and two Reads at once from two goroutines take turns at random: every
// byte comes once, in order (the two Reads at once cover the next bytes
// in one of the two orders).
func TestReadLaneMixedReaders(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		makeLane(t, c, s)
		seed := rand.Uint64()
		data := randomPattern(1<<20, seed)
		go func() {
			r := rand.New(rand.NewPCG(seed, 2))
			for p := data; len(p) > 0; {
				n := min(len(p), 1+r.IntN(64<<10))
				if _, err := s.Write(p[:n]); err != nil {
					t.Errorf("peer Write: %v", err)
					return
				}
				p = p[n:]
			}
			uv.UvtMust(t, s.CloseWrite())
		}()
		var mu sync.Mutex // the callbacks' (on the loop) and the test's
		var calls []byte
		var callEnd error
		want := 0 // bytes the callbacks should collect before Stop
		enough := make(chan struct{}, 1)
		if _, err := c.OnRead(func(p []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, p...)
			if err != nil {
				callEnd = err
			}
			if (len(calls) >= want || err != nil) && want > 0 {
				want = 0
				enough <- struct{}{}
			}
		}); err != nil {
			t.Fatal(err)
		}
		var got []byte
		r := rand.New(rand.NewPCG(seed, 3))
		buf := func() []byte { return make([]byte, 1+r.IntN(32<<10)) }
		ended := false
		for round := 0; !ended; round++ {
			if round > 100000 {
				t.Fatalf("the stream did not end after %d rounds, %d bytes", round, len(got))
			}
			switch mode := r.IntN(4); mode {
			case 0: // a blocking Read
				p := buf()
				n, err := c.Read(p)
				got = append(got, p[:n]...)
				if err == io.EOF {
					ended = true
				} else if err != nil {
					t.Fatalf("Read: %v", err)
				}
			case 1: // the callbacks, until they had some
				mu.Lock()
				want = 1 + r.IntN(64<<10)
				mu.Unlock()
				uv.UvtMust(t, v.u.Reactor.Call(func() { uv.UvtMust(t, c.Start()) }))
				uv.UvtRecv(t, enough, "bytes through the callbacks")
				uv.UvtMust(t, v.u.Reactor.Call(func() { uv.UvtMust(t, c.Stop()) }))
				mu.Lock()
				got = append(got, calls...)
				calls = nil
				if callEnd != nil {
					if callEnd != io.EOF {
						t.Fatalf("callbacks' error: %v", callEnd)
					}
					ended = true
				}
				want = 0
				select {
				case <-enough:
				default:
				}
				mu.Unlock()
			case 2: // a read request
				f, err := c.ReadAsync(1 + r.IntN(32<<10))
				uv.UvtMust(t, err)
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				p, err := event.AwaitValue(ctx, f)
				cancel()
				got = append(got, p...)
				if err == io.EOF {
					ended = true
				} else if err != nil {
					t.Fatalf("ReadAsync: %v", err)
				}
			case 3: // two Reads at once
				type res struct {
					p   []byte
					err error
				}
				out := make(chan res, 2)
				for _, p := range [][]byte{buf(), buf()} {
					go func() {
						n, err := c.Read(p)
						out <- res{p[:n], err}
					}()
				}
				a, b := uv.UvtRecv(t, out, "a Read"), uv.UvtRecv(t, out, "a Read")
				for _, x := range []res{a, b} {
					if x.err == io.EOF {
						ended = true
					} else if x.err != nil {
						t.Fatalf("Read at once: %v", x.err)
					}
				}
				next := data[min(len(got), len(data)):]
				ab := append(append([]byte(nil), a.p...), b.p...)
				if !bytes.HasPrefix(next, ab) {
					ab = append(append([]byte(nil), b.p...), a.p...)
				}
				got = append(got, ab...)
			}
			if !bytes.HasPrefix(data, got) {
				t.Fatalf("round %d: read %d bytes, first difference at %d: want the stream's bytes once each, in order", round, len(got), firstDiff(got, data))
			}
		}
		if len(got) != len(data) {
			t.Errorf("read %d bytes to the end, want %d", len(got), len(data))
		}
		for range 3 {
			if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
				t.Errorf("Read after the end = %d, %v; want 0, io.EOF", n, err)
			}
		}
		v.finish(t, c, s)
	})
}

// TestReadLaneEndsWhileWaiting: a Read waiting in the read lane ends
// with ErrClosed at the IO's Close or Abort and at the reactor's Close or
// Shutdown (its loop not running meanwhile), and with a timeout at a read
// deadline made to pass from another goroutine, after which clearing it
// lets the next Read take the next byte; no descriptor is left once the
// reactor closed.
func TestReadLaneEndsWhileWaiting(t *testing.T) {
	for _, how := range []string{"close", "abort", "reactor-close", "reactor-shutdown", "deadline"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				before := openFDs(t)
				c, s := v.pair(t)
				makeLane(t, c, s)
				waiting := readWaiting(c)
				var err error
				switch how {
				case "close":
					uv.UvtMust(t, c.Close())
				case "abort":
					uv.UvtMust(t, c.Abort())
				case "reactor-close":
					v.stop()
					uv.UvtMust(t, v.u.Close())
				case "reactor-shutdown":
					v.stop()
					ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
					uv.UvtMust(t, v.u.Shutdown(ctx))
					cancel()
				case "deadline":
					uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
				}
				err = uv.UvtRecv(t, waiting, "the waiting Read")
				if how == "deadline" {
					if !isTimeout(err) {
						t.Errorf("Read waiting as its deadline passed = %v, want a timeout", err)
					}
					if _, err := c.Read(make([]byte, 1)); !isTimeout(err) {
						t.Errorf("Read past the deadline = %v, want a timeout", err)
					}
					uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
					for i := range 3 {
						_, err := s.Write([]byte{byte(i)})
						uv.UvtMust(t, err)
						if b := readN(t, c, 1); b[0] != byte(i) {
							t.Fatalf("Read %d after the deadline was removed = %d, want %d", i, b[0], i)
						}
					}
				} else if !errors.Is(err, uv.ErrClosed) && !(err == io.EOF && strings.HasPrefix(how, "reactor")) {
					// The reactor closes the peer too: the Read may
					// read its end before its own IO closes.
					t.Errorf("Read waiting as the %s = %v, want ErrClosed", how, err)
				}
				if how == "reactor-close" || how == "reactor-shutdown" {
					v.ln.Close()
					uv.UvtShutdown(t, v.u, false)
				} else {
					v.finish(t, c, s)
				}
				if after := openFDs(t); after > before {
					t.Errorf("%d descriptors open after the reactor closed, %d before the connection", after, before)
				}
			})
		})
	}
}

// isTimeout reports an error of a deadline that passed.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// TestReadLaneDroppedIO: an IO with a read lane that nobody holds any
// more is collected and closed, its lane's descriptor with it; one whose
// Read waits in the lane is held by that Read, which takes the byte sent
// after the collections.
func TestReadLaneDroppedIO(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		before := openFDs(t)
		c, s := v.pair(t)
		makeLane(t, c, s)
		waiting := make(chan []byte, 1)
		go func(c *uv.IO) {
			p := make([]byte, 4)
			n, err := c.Read(p)
			if err != nil {
				t.Errorf("Read waiting while the IO had no other holder: %v", err)
			}
			waiting <- p[:n]
		}(c)
		laneWaiting(c)
		c = nil
		for range 5 {
			runtime.GC()
		}
		_, err := s.Write([]byte("ping"))
		uv.UvtMust(t, err)
		if got := uv.UvtRecv(t, waiting, "the waiting Read"); string(got) == "" {
			t.Errorf("the waiting Read got nothing")
		}
		// Now nothing holds the IO: it is collected and closed, and the
		// peer reads its end.
		uv.UvtMust(t, s.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, s)
			done <- err
		}()
		for {
			runtime.GC()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("peer's read to the end after the collection: %v", err)
				}
				v.finish(t, s)
				if after := openFDs(t); after > before {
					t.Errorf("%d descriptors open after the reactor closed, %d before the connection", after, before)
				}
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
}

// TestReadLanePeerEnds: the peer's close or reset while a Read waits in
// the lane ends it with io.EOF or ECONNRESET, and every Read after it,
// and a started IO's callbacks, get the same.
func TestReadLanePeerEnds(t *testing.T) {
	for _, how := range []string{"close", "reset"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				c, s := v.pair(t)
				makeLane(t, c, s)
				waiting := readWaiting(c)
				if how == "close" {
					uv.UvtMust(t, s.Close())
				} else {
					s.Abort()
				}
				same := func(err error) bool {
					if how == "close" {
						return err == io.EOF
					}
					return errors.Is(err, syscall.ECONNRESET)
				}
				if err := uv.UvtRecv(t, waiting, "the waiting Read"); !same(err) {
					t.Errorf("Read waiting as the peer's %s came = %v", how, err)
				}
				for i := range 3 {
					if n, err := c.Read(make([]byte, 1)); n != 0 || !same(err) {
						t.Errorf("Read %d after the peer's %s = %d, %v", i, how, n, err)
					}
				}
				f, err := c.ReadAsync(1)
				uv.UvtMust(t, err)
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				if p, err := event.AwaitValue(ctx, f); len(p) != 0 || !same(err) {
					t.Errorf("ReadAsync after the peer's %s = %q, %v", how, p, err)
				}
				cancel()
				calls := make(chan error, 4)
				if _, err := c.OnRead(func(p []byte, err error) {
					if len(p) > 0 {
						err = errors.New("bytes after the end")
					}
					calls <- err
				}); err != nil {
					t.Fatal(err)
				}
				var serr error
				uv.UvtMust(t, v.u.Reactor.Call(func() { serr = c.Start() }))
				if serr != nil {
					// Start says how the stream failed.
					if !same(serr) {
						t.Errorf("Start after the peer's %s = %v", how, serr)
					}
				} else if err := uv.UvtRecv(t, calls, "the callbacks' end"); !same(err) {
					t.Errorf("callbacks after the peer's %s = %v", how, err)
				}
				if n, err := c.Read(make([]byte, 1)); n != 0 || !same(err) {
					t.Errorf("Read of the started IO after the peer's %s = %d, %v", how, n, err)
				}
				v.finish(t, c, s)
			})
		})
	}
}

// TestReadLaneManyConnections: a few hundred connections, each with a
// Read waiting in its lane, closed in random order: each Read ends with
// ErrClosed, and no descriptor is left once the reactor closed.
func TestReadLaneManyConnections(t *testing.T) {
	const conns = 300
	for _, budget := range []int64{-1, conns / 3} {
		t.Run(fmt.Sprintf("budget=%d", budget), func(t *testing.T) {
			if budget >= 0 {
				// Past it, the libuv driver's Reads park on the loop.
				uv.UvtLaneDupBudget(t, budget)
			}
			manyLaneConnections(t, conns)
		})
	}
}

// manyLaneConnections is TestReadLaneManyConnections with conns
// connections.
func manyLaneConnections(t *testing.T, conns int) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		before := openFDs(t)
		cs, ss := make([]*uv.IO, conns), make([]*uv.IO, conns)
		for i := range cs {
			cs[i], ss[i] = v.pair(t)
			_, err := ss[i].Write([]byte{0xAA})
			uv.UvtMust(t, err)
			if b := readN(t, cs[i], 1); b[0] != 0xAA {
				t.Fatalf("first Read = %#x, want 0xaa", b[0])
			}
		}
		errs := make(chan error, conns)
		for _, c := range cs {
			go func() {
				_, err := c.Read(make([]byte, 1))
				errs <- err
			}()
		}
		for _, c := range cs {
			if uv.UvtReadLane(c) != "none" {
				laneWaiting(c)
			}
		}
		time.Sleep(10 * time.Millisecond) // the Reads past the budget park on the loop (either outcome is checked)
		for _, i := range rand.Perm(conns) {
			if rand.IntN(2) == 0 {
				uv.UvtMust(t, cs[i].Close())
			} else {
				uv.UvtMust(t, cs[i].Abort())
			}
		}
		for range conns {
			if err := uv.UvtRecv(t, errs, "a waiting Read"); !errors.Is(err, uv.ErrClosed) {
				t.Errorf("Read waiting as its IO closed = %v, want ErrClosed", err)
			}
		}
		closers := make([]interface{ Close() error }, conns)
		for i, s := range ss {
			closers[i] = s
		}
		v.finish(t, closers...)
		if after := openFDs(t); after > before {
			t.Errorf("%d descriptors open after the reactor closed, %d before the connections", after, before)
		}
	})
}

// TestReadLaneDeadlineSetters: two goroutines set and remove the read
// deadline at once (past, removed, far off) while Reads run and the peer
// writes: the bytes read are the stream's in order, and once both are
// done the deadline in force is one of their last, which both the loop's
// Reads and the lane's follow; a deadline set after them is in force.
func TestReadLaneDeadlineSetters(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		makeLane(t, c, s)
		data := pattern(64 << 10)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		lasts := make([]time.Time, 2)
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 9))
				for i := 0; ; i++ {
					var d time.Time
					switch r.IntN(3) {
					case 0:
						d = time.Now().Add(-time.Second)
					case 2:
						d = time.Now().Add(time.Hour)
					}
					if err := c.SetReadDeadline(d); err != nil {
						t.Errorf("SetReadDeadline: %v", err)
						return
					}
					lasts[g] = d
					select {
					case <-stop:
						if i > 100 {
							return
						}
					default:
					}
					runtime.Gosched()
				}
			}()
		}
		go func() {
			for p := data; len(p) > 0; p = p[min(len(p), 512):] {
				if _, err := s.Write(p[:min(len(p), 512)]); err != nil {
					t.Errorf("peer Write: %v", err)
					return
				}
				runtime.Gosched()
			}
		}()
		var got []byte
		p := make([]byte, 1000)
		for len(got) < len(data)/2 {
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			if err != nil && !isTimeout(err) {
				t.Fatalf("Read: %v", err)
			}
		}
		close(stop)
		wg.Wait()
		d := uv.UvtReadDeadline(c)
		inForce := func(d time.Time) bool {
			return d.Equal(lasts[0]) || d.Equal(lasts[1]) ||
				d.Before(time.Now()) && (lasts[0].Before(time.Now()) && !lasts[0].IsZero() || lasts[1].Before(time.Now()) && !lasts[1].IsZero())
		}
		if !inForce(d) {
			t.Errorf("read deadline after the setters = %v, want one of their last: %v", d, lasts)
		}
		past := !d.IsZero() && d.Before(time.Now())
		if len(got) < len(data) {
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			if past != isTimeout(err) {
				t.Errorf("Read with the deadline %v in force = %d, %v", d, n, err)
			}
		}
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		got = append(got, readN(t, c, len(data)-len(got))...)
		if !bytes.Equal(got, data) {
			t.Errorf("read %d bytes, first difference at %d: want the stream's once each, in order", len(got), firstDiff(got, data))
		}
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
		if _, err := c.Read(p); !isTimeout(err) {
			t.Errorf("Read after the last deadline passed = %v, want a timeout", err)
		}
		v.finish(t, c, s)
	})
}

// TestReadLaneDeadlineChurn: while the peer streams a known pattern, a
// reader's Reads run with read deadlines a moment off (passing in the
// netpoller and on the loop's timer at about the same time), and another
// goroutine makes the deadline pass and removes it: a Read that timed out
// took no byte, and the bytes read are the stream's, in order.
func TestReadLaneDeadlineChurn(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		makeLane(t, c, s)
		data := randomPattern(256<<10, rand.Uint64())
		go func() {
			for p := data; len(p) > 0; p = p[min(len(p), 700):] {
				if _, err := s.Write(p[:min(len(p), 700)]); err != nil {
					t.Errorf("peer Write: %v", err)
					return
				}
				if rand.IntN(8) == 0 {
					time.Sleep(50 * time.Microsecond)
				}
			}
		}()
		stop := make(chan struct{})
		toggled := make(chan struct{})
		go func() {
			defer close(toggled)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if rand.IntN(2) == 0 {
					uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
				} else {
					uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
				}
				time.Sleep(20 * time.Microsecond)
			}
		}()
		var got []byte
		p := make([]byte, 4096)
		timeouts := 0
		for len(got) < len(data)*3/4 {
			if rand.IntN(3) == 0 {
				uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(time.Duration(rand.IntN(200))*time.Microsecond)))
			}
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			switch {
			case isTimeout(err):
				timeouts++
				if n != 0 {
					t.Fatalf("a Read that timed out took %d bytes", n)
				}
			case err != nil:
				t.Fatalf("Read: %v", err)
			}
		}
		close(stop)
		<-toggled
		uv.UvtMust(t, c.SetReadDeadline(time.Time{}))
		got = append(got, readN(t, c, len(data)-len(got))...)
		if !bytes.Equal(got, data) {
			t.Errorf("read %d bytes (%d Reads timed out), first difference at %d: want the stream's once each, in order", len(got), timeouts, firstDiff(got, data))
		}
		v.finish(t, c, s)
	})
}

// TestReadLaneCloseDuringStream: Reads take a streamed pattern as the IO
// (or its reactor) closes under them: what they read is a prefix of the
// stream, in order, and the Read after is ErrClosed (never the stream's
// end, nor a byte of another descriptor).
func TestReadLaneCloseDuringStream(t *testing.T) {
	for _, how := range []string{"close", "abort", "reactor-close"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				c, s := v.pair(t)
				makeLane(t, c, s)
				data := randomPattern(1<<20, rand.Uint64())
				go s.Write(data) // ends with the close
				type res struct {
					got []byte
					err error
				}
				out := make(chan res, 1)
				started := make(chan struct{})
				go func() {
					var got []byte
					p := make([]byte, 1+rand.IntN(8192))
					tell := started
					for {
						n, err := c.Read(p)
						got = append(got, p[:n]...)
						if len(got) > 0 && tell != nil {
							close(tell)
							tell = nil
						}
						if err != nil {
							out <- res{got, err}
							return
						}
					}
				}()
				uv.UvtRecv(t, started, "the first bytes")
				time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
				switch how {
				case "close":
					c.Close()
				case "abort":
					c.Abort()
				case "reactor-close":
					v.stop()
					uv.UvtMust(t, v.u.Close())
				}
				r := uv.UvtRecv(t, out, "the reader's end")
				if !errors.Is(r.err, uv.ErrClosed) && !(how == "reactor-close" && r.err == io.EOF) {
					t.Errorf("Read as the IO closed = %v, want ErrClosed", r.err)
				}
				if !bytes.HasPrefix(data, r.got) {
					t.Errorf("read %d bytes, first difference at %d: want a prefix of the stream", len(r.got), firstDiff(r.got, data))
				}
				if how == "reactor-close" {
					v.ln.Close()
					uv.UvtShutdown(t, v.u, false)
				} else {
					v.finish(t, c, s)
				}
			})
		})
	}
}

// TestReadLaneOnLoop: a Read made on the loop goroutine never blocks,
// read lane or not: with nothing to read it fails with event.ErrOnLoop
// (a wait in the netpoller would stop the loop), and with bytes waiting
// it reads them.
func TestReadLaneOnLoop(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		makeLane(t, c, s)
		onLoop := make(chan error, 1)
		go func() {
			var err error
			v.u.Reactor.Call(func() { _, err = c.Read(make([]byte, 1)) })
			onLoop <- err
		}()
		var err error
		select {
		case err = <-onLoop:
		case <-time.After(uv.UvtSafety):
			// The loop waits in the netpoller: a byte frees it.
			t.Errorf("a Read on the loop with nothing to read still waits after %v", uv.UvtSafety)
			_, werr := s.Write([]byte{1})
			uv.UvtMust(t, werr)
			err = uv.UvtRecv(t, onLoop, "the Read on the loop")
		}
		if !errors.Is(err, event.ErrOnLoop) {
			t.Errorf("Read on the loop with nothing to read = %v, want ErrOnLoop", err)
		}
		_, err = s.Write([]byte("xyz"))
		uv.UvtMust(t, err)
		var got []byte
		readOnLoop := func() bool {
			uv.UvtMust(t, v.u.Reactor.Call(func() {
				p := make([]byte, 8)
				n, err := c.Read(p)
				got = append(got, p[:n]...)
				if err != nil && !errors.Is(err, event.ErrOnLoop) {
					t.Errorf("Read on the loop with bytes sent = %v", err)
				}
			}))
			return len(got) >= 3 || t.Failed()
		}
		uv.UvtWaitFor(t, "the bytes sent, read on the loop", readOnLoop)
		if string(got) != "xyz" {
			t.Errorf("Reads on the loop took %q, want %q", got, "xyz")
		}
		v.finish(t, c, s)
	})
}

// TestReadLaneClosedByTheCloser: a connection with a read lane (here the
// server's end, which Accept's net.Listener hands out with one) is closed
// for good before Close returns: its sockets are gone (the lane's file and,
// on the libuv driver, libuv's descriptor), a Read waiting in the netpoller
// fails with ErrClosed and the peer reads the end. The lane's file, the
// connection's last descriptor, is closed by the goroutine whose Close
// waited for the loop (the goroutine pays for the kernel's end of the
// connection, as with package net), whether one or several Close at once,
// or Abort; by the loop when nobody's Close waits (the reactor's close).
func TestReadLaneClosedByTheCloser(t *testing.T) {
	for _, how := range []string{"close", "closes", "abort", "close-on-loop", "reactor-close"} {
		t.Run(how, func(t *testing.T) {
			ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
				c, s := v.pair(t)
				makeLane(t, s, c)
				before := uv.UvtOpenSockets(t)
				// s's descriptors: one (its socket, the lane's file: on
				// the libuv driver an accepted connection unopened in
				// libuv), or libuv's and the lane's duplicate.
				gone := uv.UvtIODescriptors(s)
				reading := readWaiting(s)
				want := "closer"
				switch how {
				case "close":
					uv.UvtMust(t, s.Close())
				case "closes":
					var wg sync.WaitGroup
					wg.Add(8)
					for range 8 {
						go func() {
							defer wg.Done()
							s.Close()
						}()
					}
					wg.Wait()
				case "abort":
					if err := s.Abort(); err != nil && !errors.Is(err, uv.ErrAborted) {
						t.Fatalf("Abort = %v", err)
					}
				case "close-on-loop":
					uv.UvtMust(t, v.u.Reactor.Call(func() { uv.UvtMust(t, s.Close()) }))
				case "reactor-close":
					want = "loop"
					v.stop()
					uv.UvtMust(t, v.u.Close())
				}
				if got := uv.UvtLaneCloser(s); got != want {
					t.Errorf("the lane's file closed by %q, want %q", got, want)
				}
				if how != "reactor-close" {
					// Close has returned: nothing of s's is open any more
					// (the client's socket, the listener's and c's are).
					if got := uv.UvtOpenSockets(t); got != before-gone {
						t.Errorf("%d sockets open after Close returned, want %d", got, before-gone)
					}
				}
				// (The reactor's close closes the client too: the Read may
				// read its end first.)
				if err := uv.UvtRecv(t, reading, "the waiting Read's end"); !errors.Is(err, uv.ErrClosed) && !(how == "reactor-close" && err == io.EOF) {
					t.Errorf("a Read waiting as the IO closed = %v, want ErrClosed", err)
				}
				if how == "reactor-close" {
					v.ln.Close()
					uv.UvtShutdown(t, v.u, false)
					return
				}
				c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				if n, err := c.Read(make([]byte, 1)); n != 0 || (err != io.EOF && !errors.Is(err, syscall.ECONNRESET)) {
					t.Errorf("the peer's Read after the close = %d, %v; want the end of the stream", n, err)
				}
				v.finish(t, c)
			})
		})
	}
}

// TestReadLaneFileNotPolled: a read lane whose file Go's netpoller does
// not hold (it could not take the descriptor) cannot wait for bytes, so
// the lane is never opened: the connection's Reads go through the loop,
// a Read that finds nothing waits there and gets the bytes the peer writes
// next, and the connection's close closes its descriptor, on either driver,
// whether the lane is made by Accept's goroutine or by the loop at a
// dialled connection's first blocking Read.
func TestReadLaneFileNotPolled(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		v := newIOEnv(t, d, "tcp4")
		c, s := v.pair(t) // c's lane is made at its first blocking Read, on the loop
		uv.UvtUnpolledLaneFiles(t)
		peers := dialN(t, v.ln, 1)
		a, err := v.ln.AcceptIO(context.Background()) // its lane made by Accept's goroutine
		uv.UvtMust(t, err)
		for _, x := range []struct {
			name string
			c    *uv.IO
			peer io.Writer
		}{{"dialled", c, s}, {"accepted", a, peers[0]}} {
			got := make(chan string, 1)
			go func() {
				b := make([]byte, 8)
				n, err := x.c.Read(b)
				got <- fmt.Sprintf("%q, %v", b[:n], err)
			}()
			uv.UvtWaitFor(t, "the Read to wait on the loop, or end", func() bool { return uv.UvtParked(x.c) == 1 || len(got) == 1 })
			select {
			case r := <-got:
				t.Fatalf("%s: a Read with nothing to read = %s before the peer wrote; want it to wait", x.name, r)
			default:
			}
			if _, err := x.peer.Write([]byte("hi")); err != nil {
				t.Fatal(err)
			}
			if r, want := uv.UvtRecv(t, got, "the Read's end"), `"hi", <nil>`; r != want {
				t.Errorf("%s: the waiting Read = %s once the peer wrote, want %s", x.name, r, want)
			}
			if l := uv.UvtReadLane(x.c); l != "failed" {
				t.Errorf("%s: the read lane over a file the netpoller does not hold is %s, want failed (the loop reads)", x.name, l)
			}
		}
		a.Close()
		peersEnd(t, peers)
		v.finish(t, c, s)
		uv.UvtNoLeaks(t, base, fds)
	})
}
