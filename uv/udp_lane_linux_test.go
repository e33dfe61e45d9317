package uv_test

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// laneRead is what a ReadFrom returned.
type laneRead struct {
	Data string
	From string
	Err  error
}

// readFromAsync runs one ReadFrom into n bytes on a goroutine of its own.
func readFromAsync(u *uv.UDP, n int) chan laneRead {
	ch := make(chan laneRead, 1)
	go func() {
		buf := make([]byte, n)
		k, from, err := u.ReadFrom(buf)
		r := laneRead{Data: string(buf[:k]), Err: err}
		if from != nil {
			r.From = from.String()
		}
		ch <- r
	}()
	return ch
}

// openLane makes b's read lane with a first ReadFrom (it goes through the
// loop) and waits for the lane to open.
func openLane(t *testing.T, a, b *uv.UDP) {
	t.Helper()
	writeTo(t, a, b, "first")
	if n, _, err := b.ReadFrom(make([]byte, 16)); err != nil || n != 5 {
		t.Fatalf("first ReadFrom = %d, %v", n, err)
	}
	uv.UvtWaitFor(t, "the read lane to open", func() bool { return uv.UvtUDPLane(b) == "open" })
}

// waitInLane makes b's read lane (openLane) and returns a ReadFrom into
// 16 bytes once it waits in the lane.
func waitInLane(t *testing.T, a, b *uv.UDP) chan laneRead {
	t.Helper()
	openLane(t, a, b)
	ch := readFromAsync(b, 16)
	uv.UvtWaitFor(t, "ReadFrom to wait in the lane", func() bool { return uv.UvtUDPLane(b) == "busy" })
	return ch
}

// TestUDPReadLane: after the first ReadFrom, a ReadFrom waits in the read
// lane (on its own goroutine, not parked on the loop) and gets the next
// datagram with its sender, an address of its own, cut to its buffer as
// package net cuts it; Info counts what the lane received.
func TestUDPReadLane(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			eachUDPPair(t, network, func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
				ch := waitInLane(t, a, b)
				writeTo(t, a, b, "hello")
				got := []laneRead{uv.UvtRecv(t, ch, "ReadFrom")}
				writeTo(t, a, b, "truncated")
				got = append(got, uv.UvtRecv(t, readFromAsync(b, 3), "ReadFrom"))
				want := []laneRead{{"hello", a.LocalAddr().String(), nil}, {"tru", a.LocalAddr().String(), nil}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ReadFroms of the lane (-want +got):\n%s", diff)
				}
				writeTo(t, a, b, "x")
				writeTo(t, a, b, "y")
				buf := make([]byte, 4)
				_, f1, err1 := b.ReadFrom(buf)
				_, f2, err2 := b.ReadFrom(buf)
				if err1 != nil || err2 != nil || f1 == f2 || &f1.(*net.UDPAddr).IP[0] == &f2.(*net.UDPAddr).IP[0] {
					t.Errorf("two ReadFroms from one sender = %p, %p (%v, %v): want addresses of their own", f1, f2, err1, err2)
				}
				if in, _ := udpCounts(t, b); in != 5 {
					t.Errorf("Info counts in=%d, want 5 (%s)", in, b.Info())
				}
				if got := uv.UvtUDPLane(b); got != "open" {
					t.Errorf("lane %s after the ReadFroms, want open", got)
				}
			})
		})
	}
}

// TestUDPReadLaneHandOver: a Start with a callback while a ReadFrom waits
// in the lane marks it wanted and receives nothing until the ReadFrom has
// its datagram; then the callback gets the rest: each datagram goes to
// exactly one receiver. Stopped, the UDP opens its lane again. Fails
// without the lane (no lane to hand over).
func TestUDPReadLaneHandOver(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		ch := waitInLane(t, a, b)
		cb := make(chan string, 16)
		event.Subscribe(b, func(_ event.Event, res any, _ error) {
			if d, ok := res.(*uv.Datagram); ok {
				cb <- string(d.Data)
			}
		})
		uv.UvtMust(t, b.Start())
		if got := uv.UvtUDPLane(b); got != "wanted" {
			t.Errorf("lane %s after Start with a ReadFrom in it, want wanted", got)
		}
		var want, got []string
		for i := range 10 {
			want = append(want, strconv.Itoa(i))
			writeTo(t, a, b, strconv.Itoa(i))
		}
		got = append(got, uv.UvtRecv(t, ch, "ReadFrom").Data)
		for range 9 {
			got = append(got, uv.UvtRecv(t, cb, "callback"))
		}
		select {
		case s := <-cb:
			t.Errorf("a datagram %q more", s)
		case <-time.After(20 * time.Millisecond):
		}
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("datagrams received (-want +got):\n%s", diff)
		}
		uv.UvtMust(t, b.Stop())
		uv.UvtWaitFor(t, "the lane to open again", func() bool { return uv.UvtUDPLane(b) == "open" })
		writeTo(t, a, b, "after")
		if r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom"); r.Data != "after" || r.Err != nil {
			t.Errorf("ReadFrom after Stop = %+v", r)
		}
	})
}

// TestUDPReadLaneMixedReceivers: two goroutines receiving with ReadFrom
// while a third starts and stops the UDP with a callback: 2,016 datagrams,
// sent in windows of 32 so that the socket's buffer drops none, each
// received exactly once, whoever receives it.
func TestUDPReadLaneMixedReceivers(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		const total, window = 63 * 32, 32
		var mu sync.Mutex
		seen := map[string]int{}
		got := make(chan struct{}, total)
		note := func(s string) {
			mu.Lock()
			seen[s]++
			mu.Unlock()
			got <- struct{}{}
		}
		event.Subscribe(b, func(_ event.Event, res any, _ error) {
			if d, ok := res.(*uv.Datagram); ok {
				note(string(d.Data))
			}
		})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 16)
				for {
					n, _, err := b.ReadFrom(buf)
					if err != nil {
						if !errors.Is(err, net.ErrClosed) {
							t.Errorf("ReadFrom = %v", err)
						}
						return
					}
					note(string(buf[:n]))
				}
			}()
		}
		stop := make(chan struct{})
		toggled := make(chan struct{})
		go func() {
			defer close(toggled)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					b.Start()
				} else {
					b.Stop()
				}
				time.Sleep(time.Millisecond)
			}
		}()
		for i := 0; i < total; i += window {
			for j := i; j < i+window; j++ {
				writeTo(t, a, b, strconv.Itoa(j))
			}
			for range window {
				uv.UvtRecv(t, got, "datagram")
			}
		}
		close(stop)
		<-toggled
		uv.UvtMust(t, b.Close())
		wg.Wait()
		var wrong []string
		for i := range total {
			if n := seen[strconv.Itoa(i)]; n != 1 {
				wrong = append(wrong, fmt.Sprintf("%d received %d times", i, n))
			}
		}
		if len(wrong) > 0 || len(seen) != total {
			t.Errorf("%d distinct datagrams of %d; %v", len(seen), total, wrong)
		}
	})
}

// TestUDPReadLaneCloseWakes: Close while a ReadFrom waits in the lane
// wakes it with ErrClosed; the socket (and on the libuv driver the lane's
// duplicate) is closed: the process's sockets are back to those it had
// before the UDPs.
func TestUDPReadLaneCloseWakes(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		fds := openSockets(t)
		dups := uv.UvtLaneDups()
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer a.Close()
		b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		ch := waitInLane(t, a, b)
		uv.UvtMust(t, b.Close())
		if r := uv.UvtRecv(t, ch, "ReadFrom"); !errors.Is(r.Err, net.ErrClosed) {
			t.Errorf("ReadFrom waiting in the lane at Close = %v, want ErrClosed", r.Err)
		}
		if _, _, err := b.ReadFrom(make([]byte, 4)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom after Close = %v, want ErrClosed", err)
		}
		a.Close()
		uv.UvtWaitFor(t, "the sockets closed", func() bool { return openSockets(t) == fds && uv.UvtLaneDups() == dups })
		if got := uv.UvtUDPLane(b); got != "failed" {
			t.Errorf("lane %s after Close, want failed (closed)", got)
		}
	})
}

// TestUDPReadLaneDeadline: a read deadline set while a ReadFrom waits in
// the lane fails it with a timeout (a net.Error matching
// os.ErrDeadlineExceeded), and every ReadFrom after it, until it is
// removed.
func TestUDPReadLaneDeadline(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		ch := waitInLane(t, a, b)
		uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
		udpTimeout(t, "ReadFrom waiting in the lane", uv.UvtRecv(t, ch, "ReadFrom").Err)
		writeTo(t, a, b, "kept")
		_, _, err := b.ReadFrom(make([]byte, 16))
		udpTimeout(t, "ReadFrom past the deadline", err)
		uv.UvtMust(t, b.SetReadDeadline(time.Time{}))
		if r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom"); r.Data != "kept" || r.Err != nil {
			t.Errorf("ReadFrom after the deadline's removal = %+v, want kept", r)
		}
	})
}

// TestUDPReadLaneBudget: on the libuv driver, with no room in the read
// lanes' budget of duplicates, a UDP has no lane and its ReadFroms go
// through the loop as before.
func TestUDPReadLaneBudget(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		if u.Driver() != reactor.DriverLibuv {
			t.Skip("the pure-Go driver's lane is the socket itself")
		}
		uv.UvtLaneDupBudget(t, 0)
		for _, s := range []string{"one", "two"} {
			writeTo(t, a, b, s)
			if r := uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom"); r.Data != s || r.Err != nil {
				t.Errorf("ReadFrom = %+v, want %s", r, s)
			}
		}
		if got := uv.UvtUDPLane(b); got != "none" {
			t.Errorf("lane %s past the budget, want none", got)
		}
	})
}

// TestUDPReadLaneAllocations: a ReadFrom of the lane allocates the
// sender's address only, once (package net's allocates it in two).
func TestUDPReadLaneAllocations(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		const runs = 50
		for range runs + 1 {
			writeTo(t, a, b, "datagram")
		}
		uv.UvtWaitFor(t, "the datagrams sent", func() bool { return a.Queued() == 0 })
		buf := make([]byte, 16)
		allocs := testing.AllocsPerRun(runs, func() {
			if _, _, err := b.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 {
			t.Errorf("%.1f allocations per ReadFrom, want 1", allocs)
		}
	})
}

// TestUDPReadLaneStopMidBatch: a callback that stops the UDP on the first
// datagram of a batch leaves the rest of the batch read already (kept):
// the lane stays shut until they are taken, so a ReadFrom made from the
// callback goes to the loop and gets them, in order (with the lane open
// mid-batch it waited in the netpoller while they sat in the keep). Once
// they are taken the lane opens again and a later ReadFrom waits in it.
func TestUDPReadLaneStopMidBatch(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		openLane(t, a, b)
		var laneAtStop string
		var ch chan laneRead
		first := true
		called := make(chan struct{})
		event.Subscribe(b, func(_ event.Event, res any, _ error) {
			if _, ok := res.(*uv.Datagram); !ok || !first {
				return
			}
			first = false
			uv.UvtMust(t, b.Stop())
			laneAtStop = uv.UvtUDPLane(b)
			ch = readFromAsync(b, 16)
			if laneAtStop == "open" { // let it wait in the lane, as it would
				uv.UvtWaitFor(t, "ReadFrom to wait in the lane", func() bool { return uv.UvtUDPLane(b) == "busy" })
			}
			close(called)
		})
		// On loopback a sent datagram is in b's socket buffer: all 8 are
		// read in the first batch once b starts.
		for j := range 8 {
			writeTo(t, a, b, strconv.Itoa(j))
		}
		uv.UvtWaitFor(t, "the datagrams sent", func() bool { return a.Queued() == 0 })
		uv.UvtMust(t, b.Start())
		uv.UvtRecv(t, called, "callback")
		if laneAtStop != "shut" {
			t.Errorf("lane %s after a Stop mid-batch, want shut", laneAtStop)
		}
		var got []string
		select {
		case r := <-ch:
			got = append(got, r.Data)
		case <-time.After(5 * time.Second): // a safety net: it waits for nothing
			t.Errorf("ReadFrom waits with datagrams kept: lane %s; %s", uv.UvtUDPLane(b), b.Info())
			writeTo(t, a, b, "unstick")
			got = append(got, uv.UvtRecv(t, ch, "ReadFrom").Data)
		}
		for len(got) < 7 {
			got = append(got, uv.UvtRecv(t, readFromAsync(b, 16), "ReadFrom").Data)
		}
		if diff := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7"}, got); diff != "" {
			t.Errorf("ReadFroms after the Stop (-want +got):\n%s", diff)
		}
		if t.Failed() {
			return
		}
		uv.UvtWaitFor(t, "the read lane to open again", func() bool { return uv.UvtUDPLane(b) == "open" })
		ch = readFromAsync(b, 16)
		uv.UvtWaitFor(t, "ReadFrom to wait in the lane", func() bool { return uv.UvtUDPLane(b) == "busy" })
		writeTo(t, a, b, "again")
		if r := uv.UvtRecv(t, ch, "ReadFrom"); r.Data != "again" || r.Err != nil {
			t.Errorf("ReadFrom in the lane = %+v, want again", r)
		}
	})
}

// TestUDPReadLaneBatchTail: a ReadFrom through the loop whose receiving
// pass reads more datagrams than it takes (libuv reads a batch: the rest
// are kept), and a second ReadFrom made as the first returns: the lane
// never opens while datagrams read are still to be delivered or kept (it
// did, once the first was answered, and the second ReadFrom waited in the
// lane for an empty socket until its deadline while the rest of the batch
// was kept), the second gets the next datagram, and every datagram is read
// once, in order.
func TestUDPReadLaneBatchTail(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		if u.Driver() != reactor.DriverLibuv {
			t.Skip("the pure-Go driver receives no more than the ReadFroms waiting take")
		}
		const n = 10
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		uv.UvtWaitFor(t, "the datagrams sent", func() bool { return a.Queued() == 0 })
		var opened, early atomic.Int32
		uv.UvtOnUDPLaneOpen(t, func() {
			opened.Add(1)
			if !uv.UvtUDPSettledOnLoop(b) {
				early.Add(1)
			}
		})
		buf := make([]byte, 16)
		k, _, err := b.ReadFrom(buf)
		uv.UvtMust(t, err)
		got := []string{string(buf[:k])}
		r := uv.UvtRecv(t, readFromAsync(b, 16), "the second ReadFrom")
		if r.Err != nil {
			t.Fatalf("the second ReadFrom = %v (%s)", r.Err, uv.UvtUDPState(b))
		}
		got = append(got, r.Data)
		for len(got) < n {
			k, _, err := b.ReadFrom(buf)
			uv.UvtMust(t, err)
			got = append(got, string(buf[:k]))
		}
		var want []string
		for i := range n {
			want = append(want, strconv.Itoa(i))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("datagrams read (-want +got):\n%s", diff)
		}
		if early.Load() != 0 {
			t.Errorf("the lane opened %d times (of %d) with datagrams read and not delivered", early.Load(), opened.Load())
		}
	})
}
