package uv_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// receivedOnce checks that the datagrams numbered 0 to n-1 were each
// received at most once across got, and that those received and those
// dropped make n.
func receivedOnce(t *testing.T, got []int, dropped, n int) {
	t.Helper()
	seen := make(map[int]int)
	for _, i := range got {
		seen[i]++
	}
	var twice []int
	for i, k := range seen {
		if k > 1 || i < 0 || i >= n {
			twice = append(twice, i)
		}
	}
	if len(twice) > 0 {
		t.Errorf("received more than once, or never sent: %v", twice)
	}
	if len(got)+dropped != n {
		t.Errorf("received %d, dropped %d; want %d in all", len(got), dropped, n)
	}
}

// TestUDPReadLaneStartStopChurn: a goroutine starting and stopping the UDP
// (which has a callback) over and over while another loops on ReadFrom,
// the lane handed to the loop and back each time: every datagram goes to
// the callback or to a ReadFrom, once, or is counted as dropped (none on
// the pure-Go driver), and Close ends the ReadFrom with ErrClosed.
func TestUDPReadLaneStartStopChurn(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		const n = 200 // fewer than the socket's buffer holds
		var mu sync.Mutex
		var got []int
		add := func(s string) {
			i, err := strconv.Atoi(s)
			if err != nil {
				i = -1
			}
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		}
		_, err := b.OnDatagram(func(d uv.Datagram, err error) {
			if err == nil {
				add(string(d.Data))
			}
		})
		uv.UvtMust(t, err)
		readerDone := readEach(b, add)
		var stop atomic.Bool
		churnDone := make(chan struct{})
		go func() {
			defer close(churnDone)
			for !stop.Load() {
				b.Start()
				runtime.Gosched()
				b.Stop()
				runtime.Gosched()
			}
		}()
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		uv.UvtWaitFor(t, "every datagram received or dropped", func() bool {
			in, dropped := udpCounts(t, b)
			mu.Lock()
			defer mu.Unlock()
			return in == n+1 && len(got)+dropped == n
		})
		stop.Store(true)
		<-uv.UvtRecv(t, wrapDone(churnDone), "the churn's end")
		uv.UvtMust(t, b.Close())
		if err := uv.UvtRecv(t, readerDone, "ReadFrom's end at Close"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom at Close = %v, want ErrClosed", err)
		}
		_, dropped := udpCounts(t, b)
		if u.Driver() == reactor.DriverGo && dropped != 0 {
			t.Errorf("the pure-Go driver dropped %d", dropped)
		}
		mu.Lock()
		defer mu.Unlock()
		receivedOnce(t, got, dropped, n)
	})
}

// readEach loops on b's ReadFrom on a goroutine of its own, giving each
// datagram to add, until a ReadFrom fails: its error is sent.
func readEach(b *uv.UDP, add func(string)) <-chan error {
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 16)
		for {
			k, _, err := b.ReadFrom(buf)
			if err != nil {
				done <- err
				return
			}
			add(string(buf[:k]))
		}
	}()
	return done
}

// wrapDone makes a closed-when-done channel one UvtRecv can wait on.
func wrapDone(done <-chan struct{}) <-chan <-chan struct{} {
	ch := make(chan (<-chan struct{}), 1)
	go func() {
		<-done
		ch <- done
	}()
	return ch
}

// TestUDPReadLaneCloseMidStream: Close while a goroutine loops on
// ReadFrom and datagrams keep coming ends its ReadFrom with an error
// wrapping ErrClosed; what it read before is in order, with no datagram
// twice.
func TestUDPReadLaneCloseMidStream(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		const n = 200
		var read atomic.Int32
		var got []int
		done := readEach(b, func(s string) {
			i, _ := strconv.Atoi(s)
			got = append(got, i)
			read.Add(1)
		})
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		uv.UvtWaitFor(t, "half the datagrams read", func() bool { return read.Load() >= n/2 })
		uv.UvtMust(t, b.Close())
		if err := uv.UvtRecv(t, done, "ReadFrom's end at Close"); !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom at Close = %v, want ErrClosed", err)
		}
		for k := 1; k < len(got); k++ {
			if got[k] <= got[k-1] {
				t.Fatalf("datagram %d read after %d", got[k], got[k-1])
			}
		}
	})
}

// TestUDPReadLaneReactorClose: the reactor's Close while a ReadFrom waits
// in the lane ends it with an error wrapping ErrClosed, and leaves no
// socket (nor, on the libuv driver, the lane's duplicate) open.
func TestUDPReadLaneReactorClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		fds := openSockets(t)
		dups := uv.UvtLaneDups()
		stop := uv.UvtServe(t, u)
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		ch := waitInLane(t, a, b)
		stop()
		uv.UvtMust(t, u.Close())
		if r := uv.UvtRecv(t, ch, "ReadFrom's end at the reactor's Close"); !errors.Is(r.Err, net.ErrClosed) {
			t.Errorf("ReadFrom waiting in the lane at the reactor's Close = %v, want ErrClosed", r.Err)
		}
		uv.UvtWaitFor(t, "the sockets closed", func() bool { return openSockets(t) == fds && uv.UvtLaneDups() == dups })
	})
}

// TestUDPReadLaneDeadlineMoves: the read deadline moved while a ReadFrom
// waits in the lane: extended, or removed, the ReadFrom still gets the next
// datagram; set in the past, it times out at once, and once removed again
// the lane receives.
func TestUDPReadLaneDeadlineMoves(t *testing.T) {
	for _, move := range []struct {
		name string
		to   time.Time
	}{{"extended", time.Now().Add(time.Hour)}, {"removed", time.Time{}}} {
		t.Run(move.name, func(t *testing.T) {
			eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
				ch := waitInLane(t, a, b)
				uv.UvtMust(t, b.SetReadDeadline(move.to))
				writeTo(t, a, b, "next")
				if r := uv.UvtRecv(t, ch, "ReadFrom"); r.Data != "next" || r.Err != nil {
					t.Errorf("ReadFrom with the deadline %s = %+v, want next", move.name, r)
				}
			})
		})
	}
	t.Run("past", func(t *testing.T) {
		eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
			ch := waitInLane(t, a, b)
			uv.UvtMust(t, b.SetReadDeadline(time.Unix(1, 0)))
			udpTimeout(t, "ReadFrom waiting in the lane, the deadline set past", uv.UvtRecv(t, ch, "ReadFrom").Err)
			uv.UvtMust(t, b.SetReadDeadline(time.Time{}))
			writeTo(t, a, b, "after")
			if r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom"); r.Data != "after" || r.Err != nil {
				t.Errorf("ReadFrom after the deadline's removal = %+v, want after", r)
			}
		})
	})
}

// TestUDPReadLaneDroppedFreed: UDPs with a read lane dropped without
// Close, under a small GOGC, leave no descriptor open once collected (the
// socket, and on the libuv driver the lane's duplicate), a read deadline
// set on each.
func TestUDPReadLaneDroppedFreed(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		defer debug.SetGCPercent(debug.SetGCPercent(5))
		stop := uv.UvtServe(t, u)
		defer stop()
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer a.Close()
		// The count is taken after one UDP with a lane and a deadline was
		// closed: what is opened once, at the first of them, is not a UDP's.
		fds := -1
		for i := range 21 {
			b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
			openLane(t, a, b)
			if i == 0 {
				uv.UvtMust(t, b.Close())
				uv.UvtWaitFor(t, "the first UDP closed", func() bool { return uv.UvtUDPs(u) == 1 })
				fds = openFDs(t)
				continue
			}
			writeTo(t, a, b, "lane")
			if r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom"); r.Data != "lane" || r.Err != nil {
				t.Fatalf("ReadFrom in the lane = %+v", r)
			}
		}
		uv.UvtWaitFor(t, "the dropped UDPs' descriptors closed", func() bool {
			runtime.GC()
			return openFDs(t) == fds
		})
	})
}

// TestUDPReadLaneHiddenDoesNotHoldRun: a hidden UDP whose ReadFrom waits
// in the lane does not keep Run going (the hidden-event rule; a lane's
// ReadFrom does not even when shown), and the ReadFrom still gets the
// next datagram, received on its own goroutine with no loop running.
func TestUDPReadLaneHiddenDoesNotHoldRun(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer a.Close()
		b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer b.Close()
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		uv.UvtMust(t, b.SetHidden(true))
		ch := waitInLane(t, a, b)
		stop()
		ran := make(chan error, 1)
		go func() { ran <- u.Run(context.Background()) }()
		if err := uv.UvtRecv(t, ran, "Run's return"); err != nil {
			t.Errorf("Run = %v", err)
		}
		// Sent by package net: a's WriteTo would need the loop.
		c, err := net.Dial("udp4", b.LocalAddr().String())
		uv.UvtMust(t, err)
		defer c.Close()
		_, err = c.Write([]byte("later"))
		uv.UvtMust(t, err)
		if r := uv.UvtRecv(t, ch, "ReadFrom"); r.Data != "later" || r.Err != nil {
			t.Errorf("ReadFrom in the lane after Run returned = %+v, want later", r)
		}
		stop = uv.UvtServe(t, u)
		defer stop()
	})
}

// TestUDPReadLaneFileNotPolled: a read lane whose file Go's netpoller does
// not hold is never opened: ReadFroms go through the loop and get the
// datagrams, none fails.
func TestUDPReadLaneFileNotPolled(t *testing.T) {
	uv.UvtUnpolledLaneFiles(t)
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		var got []string
		for _, s := range []string{"one", "two", "three"} {
			ch := readFromAsync(b, 16)
			writeTo(t, a, b, s)
			r := uv.UvtRecv(t, ch, "ReadFrom")
			if r.Err != nil {
				t.Fatalf("ReadFrom = %v (lane %s)", r.Err, uv.UvtUDPLane(b))
			}
			got = append(got, r.Data)
		}
		if diff := cmp.Diff([]string{"one", "two", "three"}, got); diff != "" {
			t.Errorf("ReadFroms (-want +got):\n%s", diff)
		}
		if lane := uv.UvtUDPLane(b); lane == "open" || lane == "busy" {
			t.Errorf("lane %s with a file the netpoller does not hold", lane)
		}
	})
}
