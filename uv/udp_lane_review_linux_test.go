package uv_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestUDPReadLaneConcurrentReaders: four goroutines looping on ReadFrom
// of one UDP with a lane (one in the lane, the others parked on the loop
// behind it): every datagram goes to one of them, each reader's in the
// order sent, none lost, and Close ends all four with ErrClosed.
func TestUDPReadLaneConcurrentReaders(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		const readers, n = 4, 200 // fewer than the socket's buffer holds
		var mu sync.Mutex
		var got []int
		each := make([][]int, readers)
		var dones []<-chan error
		for r := range readers {
			dones = append(dones, readEach(b, func(s string) {
				i, err := strconv.Atoi(s)
				if err != nil {
					i = -1
				}
				mu.Lock()
				got = append(got, i)
				each[r] = append(each[r], i)
				mu.Unlock()
			}))
		}
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		uv.UvtWaitFor(t, "every datagram received or dropped", func() bool {
			_, dropped := udpCounts(t, b)
			mu.Lock()
			defer mu.Unlock()
			return len(got)+dropped == n
		})
		uv.UvtMust(t, b.Close())
		for r, done := range dones {
			if err := uv.UvtRecv(t, done, "ReadFrom's end at Close"); !errors.Is(err, net.ErrClosed) {
				t.Errorf("reader %d's ReadFrom at Close = %v, want ErrClosed", r, err)
			}
		}
		_, dropped := udpCounts(t, b)
		mu.Lock()
		defer mu.Unlock()
		receivedOnce(t, got, dropped, n)
		for r, seq := range each {
			for k := 1; k < len(seq); k++ {
				if seq[k] <= seq[k-1] {
					t.Errorf("reader %d got %d after %d", r, seq[k], seq[k-1])
				}
			}
		}
	})
}

// TestUDPReadFromCutsAsNet: datagrams longer than ReadFrom's buffer (an
// empty one too) are cut as package net's ReadFrom cuts them: n is what
// was copied, no error, and the rest of the datagram is gone, through the
// loop (the first ReadFrom) and through the lane alike.
func TestUDPReadFromCutsAsNet(t *testing.T) {
	type read struct {
		N    int
		Data string
		Err  bool
	}
	sends := []string{"truncated", "whole", "emptied", "cut", "last"}
	sizes := []int{3, 16, 0, 2, 16}
	var want []read
	{
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		uv.UvtMust(t, err)
		defer c.Close()
		s, err := net.DialUDP("udp4", nil, c.LocalAddr().(*net.UDPAddr))
		uv.UvtMust(t, err)
		defer s.Close()
		uv.UvtMust(t, c.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		for i, p := range sends {
			_, err := s.Write([]byte(p))
			uv.UvtMust(t, err)
			buf := make([]byte, sizes[i])
			k, _, err := c.ReadFrom(buf)
			want = append(want, read{k, string(buf[:k]), err != nil})
		}
	}
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		var got []read
		for i, p := range sends {
			if i == 1 {
				uv.UvtWaitFor(t, "the read lane to open", func() bool { return uv.UvtUDPLane(b) == "open" })
			}
			writeTo(t, a, b, p)
			buf := make([]byte, sizes[i])
			k, _, err := b.ReadFrom(buf)
			got = append(got, read{k, string(buf[:k]), err != nil})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadFroms (-net's +got):\n%s", diff)
		}
	})
}

// TestUDPReadLaneConnectionRefused: a connected socket's ICMP port
// unreachable, arriving while a ReadFrom waits in the lane, ends that
// ReadFrom with an error matching ECONNREFUSED, as package net's ReadFrom
// on a connected UDP gets it; the lane is open again after it.
func TestUDPReadLaneConnectionRefused(t *testing.T) {
	dead, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	uv.UvtMust(t, err)
	to := dead.LocalAddr().(*net.UDPAddr)
	uv.UvtMust(t, dead.Close()) // nobody listens there now: ICMP port unreachable
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		ch := waitInLane(t, a, b)
		uv.UvtConnectUDP(t, b, to)
		_, err := b.WriteTo([]byte("anyone?"), to)
		uv.UvtMust(t, err)
		r := uv.UvtRecv(t, ch, "ReadFrom")
		if !errors.Is(r.Err, syscall.ECONNREFUSED) {
			t.Errorf("ReadFrom in the lane after an ICMP port unreachable = %+v, want ECONNREFUSED", r)
		}
		uv.UvtWaitFor(t, "the read lane to open again", func() bool { return uv.UvtUDPLane(b) == "open" })
	})
}

// TestUDPReadLaneNoDescriptor: on the libuv driver, the lane's first
// ReadFrom with no descriptor left for its duplicate (EMFILE): the
// ReadFroms get their datagrams through the loop, none fails, and the UDP
// has no lane. (The pure-Go driver's lane is the socket itself; the
// reactor may report that it cannot watch its loop meanwhile.)
func TestUDPReadLaneNoDescriptor(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		if u.Driver() != reactor.DriverLibuv {
			t.Skip("the pure-Go driver's lane is the socket itself")
		}
		stop := uv.UvtServe(t, u)
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer a.Close()
		b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer b.Close()
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		release := starveDescriptors(t)
		defer release()
		var got []string
		for _, s := range []string{"one", "two", "three"} {
			writeTo(t, a, b, s)
			r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom")
			if r.Err != nil {
				t.Fatalf("ReadFrom with no descriptor left = %v (lane %s)", r.Err, uv.UvtUDPLane(b))
			}
			got = append(got, r.Data)
		}
		lane := uv.UvtUDPLane(b)
		release()
		if diff := cmp.Diff([]string{"one", "two", "three"}, got); diff != "" {
			t.Errorf("ReadFroms (-want +got):\n%s", diff)
		}
		if lane != "none" {
			t.Errorf("lane %s with no descriptor left for its duplicate, want none", lane)
		}
		a.Close()
		b.Close()
		stop()
		uv.UvtShutdown(t, u, true)
	})
}

// TestUDPReadLaneUnsubscribeLast: the last callback of a started UDP with
// a lane unsubscribed, then a datagram: nothing takes datagrams on the
// loop any more, so the loop stops receiving (on the pure-Go driver the
// socket stayed polled for input its pass would not read: every pass of
// the loop found it ready again, a core spent until a ReadFrom came; on
// the libuv driver the datagram is read and kept); the datagrams then go
// to the ReadFroms in order.
func TestUDPReadLaneUnsubscribeLast(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		cb, err := event.Subscribe(b, func(event.Event, any, error) {})
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.Start())
		// The read deadline's timer looks again when it fires: past the
		// wait's own safety deadline here, so that it never ends the wait.
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(2*uv.UvtSafety)))
		uv.UvtMust(t, b.DelCallback(cb))
		// The last callback's leaving stops the receiving at once
		// (Unsubscribed), not at the next datagram.
		if st := uv.UvtUDPState(b); !strings.Contains(st, "receiving=false") {
			t.Errorf("after the last callback left: %s; want receiving=false", st)
		}
		writeTo(t, a, b, "0")
		uv.UvtWaitFor(t, "the loop to stop receiving", func() bool {
			return strings.Contains(uv.UvtUDPState(b), "receiving=false")
		})
		writeTo(t, a, b, "1")
		writeTo(t, a, b, "2")
		var got []string
		for range 3 {
			r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom")
			if r.Err != nil {
				t.Errorf("ReadFrom after the unsubscription = %v (%s)", r.Err, uv.UvtUDPState(b))
			}
			got = append(got, r.Data)
		}
		if diff := cmp.Diff([]string{"0", "1", "2"}, got); diff != "" {
			t.Errorf("ReadFroms after the unsubscription (-want +got):\n%s", diff)
		}
	})
}

// TestUDPCloseCountsKeptDropped: the datagrams a UDP kept for readers to
// come and still holds at its Close are counted dropped in Info, as the
// type's doc says Close drops them: in = delivered + dropped after the
// Close. On either driver: a callback's Stop mid-batch leaves 7 of the 8
// read in one batch kept.
func TestUDPCloseCountsKeptDropped(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		delivered := 0
		_, err := event.Subscribe(b, func(_ event.Event, res any, _ error) {
			if _, ok := res.(*uv.Datagram); ok {
				delivered++
				uv.UvtMust(t, b.Stop())
			}
		})
		uv.UvtMust(t, err)
		for j := range 8 {
			writeTo(t, a, b, strconv.Itoa(j))
		}
		uv.UvtWaitFor(t, "the datagrams sent", func() bool { return a.Queued() == 0 })
		uv.UvtMust(t, b.Start())
		uv.UvtWaitFor(t, "seven datagrams kept", func() bool { return strings.Contains(uv.UvtUDPState(b), "kept=7") })
		uv.UvtMust(t, b.Close())
		var n int
		uv.UvtMust(t, u.Call(func() { n = delivered }))
		in, dropped := udpCounts(t, b)
		if in != 8 || n+dropped != in {
			t.Errorf("after Close: in=%d, delivered %d, dropped=%d; want in=8 = delivered + dropped", in, n, dropped)
		}
	})
}
