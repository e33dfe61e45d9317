package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// raceWrite is one write of TestAbortRacingWriters: its id (every byte of
// it is the id, so the reader's stream tells whose bytes it got), how it
// was made, the goroutine and its order there, and its outcome.
type raceWrite struct {
	id, g, seq int
	size       int
	blocking   bool
	accepted   bool // a Send or WriteAsync that returned no error, or a Write
	n          int  // a blocking Write's n
	err        error
}

// raceWriteSizes are the sizes the writers cycle through: one byte, a
// page, more than the socket's buffers, and more than the Write's window.
var raceWriteSizes = []int{1, 4096, 70000, 1, 300000, 17, 1<<20 + 5000}

// raceRun reads what the peer got as runs of one id each: the id and how
// many bytes.
type raceRun struct{ id, n int }

// runsOf cuts a stream into its runs of equal bytes.
func runsOf(got []byte) []raceRun {
	var runs []raceRun
	for _, b := range got {
		if k := len(runs) - 1; k >= 0 && runs[k].id == int(b) {
			runs[k].n++
			continue
		}
		runs = append(runs, raceRun{int(b), 1})
	}
	return runs
}

// TestAbortRacingWriters: Abort (or Close after SetLinger(0)) from a
// goroutine of its own while several goroutines write (blocking Writes,
// Sends, WriteAsyncs) and the peer reads. The peer's stream must be the
// writes in an order each goroutine's agrees with, every one whole but
// the last (the transport writes in order: nothing after a write cut
// short reaches the peer), no write twice, no byte of a write that was
// not accepted. Over a Unix socket (no reset: the peer reads every byte
// the kernel took) a blocking Write's bytes read are its n exactly, and
// the drop reported is the bytes of the Sends and WriteAsyncs the peer
// did not get, plus at most the rest of the blocking Writes (those they
// handed to the transport); over TCP (a reset) a prefix of that. A second
// Abort, and Close, after it change nothing. Both drivers.
func TestAbortRacingWriters(t *testing.T) {
	for _, network := range []string{"pair", "unix", "tcp4"} {
		t.Run(network, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				for i := range 6 {
					abortRaceRound(t, u, network, i)
				}
				stop()
				uv.UvtShutdown(t, u, true)
			})
		})
	}
}

// abortRaceOpen opens round's IO over network and its peer.
func abortRaceOpen(t *testing.T, u *uv.UvtReactor, network string) (*uv.IO, net.Conn) {
	if network == "pair" {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		uv.UvtMust(t, err)
		uv.UvtMust(t, unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096))
		uv.UvtMust(t, unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_RCVBUF, 4096))
		return unixPairOf(t, u, fds)
	}
	return abortPeer(t, u, network)
}

// abortRaceRound is a round of TestAbortRacingWriters.
func abortRaceRound(t *testing.T, u *uv.UvtReactor, network string, round int) {
	t.Helper()
	w, peer := abortRaceOpen(t, u, network)
	uv.UvtMust(t, w.SetHighWaterMark(64<<20))
	drops0 := len(drops(u))
	const goroutines, perG = 4, 12
	writes := make([]*raceWrite, 0, goroutines*perG)
	for g := range goroutines {
		for s := range perG {
			id := 1 + len(writes)
			writes = append(writes, &raceWrite{id: id, g: g, seq: s, size: raceWriteSizes[(id+round)%len(raceWriteSizes)], blocking: (g+s+round)%3 == 0})
		}
	}
	readc := make(chan []byte, 1)
	go func() {
		peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		var got []byte
		buf := make([]byte, 32<<10)
		for {
			k, err := peer.Read(buf)
			got = append(got, buf[:k]...)
			if err != nil {
				readc <- got
				return
			}
		}
	}()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var futures []*event.Future[int]
			var fw []*raceWrite
			for s := range perG {
				x := writes[g*perG+s]
				p := make([]byte, x.size)
				for k := range p {
					p[k] = byte(x.id)
				}
				switch {
				case x.blocking:
					x.accepted = true
					x.n, x.err = w.Write(p)
				case (x.id+round)%2 == 0:
					x.err = w.Send(p)
					x.accepted = x.err == nil
				default:
					// On the loop, so that a request the closed IO refuses
					// is told from one it accepted: refused, it is done at
					// once.
					var f *event.Future[int]
					uv.UvtMust(t, u.Call(func() {
						f, x.err = w.WriteAsync(p)
						if x.err == nil && f.Done() {
							_, _, x.err = f.Outcome()
						}
					}))
					x.accepted = x.err == nil
					if x.err == nil {
						futures = append(futures, f)
						fw = append(fw, x)
					}
				}
			}
			for k, f := range futures {
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				_, err := event.AwaitValue(ctx, f)
				cancel()
				if err != nil && !errors.Is(err, uv.ErrClosed) {
					t.Errorf("WriteAsync %d = %v, want nil or ErrClosed", fw[k].id, err)
				}
			}
		}()
	}
	abort := abortCloses[round%len(abortCloses)]
	close(start)
	for range round * 3 { // let the writers get some way (how far does not matter)
		uv.UvtMust(t, u.Call(func() {}))
	}
	uv.UvtMust(t, abort.close(w))
	wg.Wait()
	if err := w.Abort(); err != nil && !errors.Is(err, uv.ErrClosed) {
		t.Errorf("a second Abort = %v", err)
	}
	if err := w.Close(); err != nil && !errors.Is(err, uv.ErrClosed) {
		t.Errorf("Close after Abort = %v", err)
	}
	got := uv.UvtRecv(t, readc, "the peer's stream")
	dropped := droppedSince(t, u, drops0)
	what := fmt.Sprintf("%s round %d, %s", network, round, abort.name)
	checkRaceStream(t, what, network != "tcp4", writes, got, dropped)
	if n := len(drops(u)) - drops0; n > 1 {
		t.Errorf("%s: %d drop reports, want at most one", what, n)
	}
}

// checkRaceStream checks the peer's stream and the drop against the
// writes made (TestAbortRacingWriters).
func checkRaceStream(t *testing.T, what string, exact bool, writes []*raceWrite, got []byte, dropped int) {
	t.Helper()
	var problems []string
	runs := runsOf(got)
	read := make(map[int]int)
	for k, r := range runs {
		if r.id < 1 || r.id > len(writes) {
			problems = append(problems, fmt.Sprintf("run %d: byte %d of no write", k, r.id))
			continue
		}
		x := writes[r.id-1]
		if _, twice := read[r.id]; twice {
			problems = append(problems, fmt.Sprintf("write %d read twice", r.id))
		}
		read[r.id] += r.n
		if !x.accepted {
			problems = append(problems, fmt.Sprintf("write %d not accepted (%v), %d bytes read", r.id, x.err, r.n))
		}
		if r.n > x.size || k < len(runs)-1 && r.n != x.size {
			problems = append(problems, fmt.Sprintf("write %d (%d bytes): run %d of %d has %d", r.id, x.size, k, len(runs), r.n))
		}
	}
	// Each goroutine's writes go out in its order: one read means those
	// before it were read whole.
	for _, x := range writes {
		if read[x.id] == 0 {
			continue
		}
		for _, y := range writes {
			if y.g == x.g && y.seq < x.seq && y.accepted && read[y.id] != y.size {
				problems = append(problems, fmt.Sprintf("write %d read, but %d before it on its goroutine only %d of %d", x.id, y.id, read[y.id], y.size))
			}
		}
	}
	lost, rest := 0, 0 // the accepted bytes of the Sends and WriteAsyncs not read; the blocking Writes' not written
	for _, x := range writes {
		switch {
		case x.blocking:
			if x.err == nil && x.n != x.size || x.err != nil && !errors.Is(x.err, uv.ErrClosed) || x.n < 0 || x.n > x.size {
				problems = append(problems, fmt.Sprintf("Write %d of %d bytes = %d, %v", x.id, x.size, x.n, x.err))
			}
			if exact && read[x.id] != x.n || read[x.id] > x.n {
				problems = append(problems, fmt.Sprintf("Write %d = %d, %v; its bytes read %d", x.id, x.n, x.err, read[x.id]))
			}
			rest += x.size - x.n
		case x.accepted:
			lost += x.size - read[x.id]
		}
	}
	if exact && (dropped < lost || dropped > lost+rest) {
		problems = append(problems, fmt.Sprintf("dropped %d, want the %d of the Sends and WriteAsyncs not read, and at most %d of the Writes' rest", dropped, lost, rest))
	}
	if !exact && dropped > lost+rest {
		problems = append(problems, fmt.Sprintf("dropped %d, more than the %d not read and the %d of the Writes' rest", dropped, lost, rest))
	}
	if diff := cmp.Diff([]string(nil), problems); diff != "" {
		t.Errorf("%s: read %d bytes in %d runs, %d dropped (-want +got):\n%s", what, len(got), len(runs), dropped, diff)
	}
}
