package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// udpCounts reads Info's in and dropped.
func udpCounts(t *testing.T, u *uv.UDP) (in, dropped int) {
	t.Helper()
	m := regexp.MustCompile(`in=(\d+), out=\d+, dropped=(\d+)`).FindStringSubmatch(u.Info())
	if m == nil {
		t.Fatalf("Info %q has no counts", u.Info())
	}
	in, _ = strconv.Atoi(m[1])
	dropped, _ = strconv.Atoi(m[2])
	return in, dropped
}

// checkUDPAccount checks Info's counts once all sent datagrams are in:
// in = sent = got + dropped, and none dropped on the pure-Go driver (which
// stops reading when its keep is full; the libuv driver drops and counts
// what libuv's pass read past it).
func checkUDPAccount(t *testing.T, u *uv.UvtReactor, b *uv.UDP, got, sent int) {
	t.Helper()
	in, dropped := udpCounts(t, b)
	if in != sent || got+dropped != in {
		t.Errorf("got %d, in=%d dropped=%d; want in=%d = got + dropped", got, in, dropped, sent)
	}
	if u.Driver() == reactor.DriverGo && dropped != 0 {
		t.Errorf("the pure-Go driver dropped %d", dropped)
	}
}

// readResult is what a ReadFrom returned, as TestUDPSizeBoundaries checks.
type readResult struct {
	N     int
	Equal bool // p[:N] is the datagram's start
}

// TestUDPSizeBoundaries: a datagram of every size at the edges (the
// largest of the family and one less, one byte, none) arrives whole and not
// Truncated through a callback, and a ReadFrom into exactly its size, or
// one byte less, returns that many of its bytes, as package net does, on
// both drivers.
func TestUDPSizeBoundaries(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			eachUDPPair(t, network, func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
				max := maxUDPPayload(network)
				sizes := []int{max, max - 1, 1, 0}
				payload := func(n int) []byte {
					p := make([]byte, n)
					for i := range p {
						p[i] = byte(i*7 + n)
					}
					return p
				}
				var got, want []readResult
				for _, n := range sizes {
					for _, room := range []int{n, n - 1} {
						if room < 0 {
							continue
						}
						p := payload(n)
						if _, err := a.WriteTo(p, b.LocalAddr()); err != nil {
							t.Fatal(err)
						}
						buf := make([]byte, room)
						k, _, err := b.ReadFrom(buf)
						uv.UvtMust(t, err)
						got = append(got, readResult{k, bytes.Equal(buf[:k], p[:min(k, n)])})
						want = append(want, readResult{room, true})
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ReadFrom at the edges, sizes %v (-want +got):\n%s", sizes, diff)
				}
				sizesOf := func(x *uv.UDP) chan datagramSize {
					ch := make(chan datagramSize, len(sizes))
					event.Subscribe(x, func(_ event.Event, res any, _ error) {
						if dg, ok := res.(*uv.Datagram); ok {
							ch <- datagramSize{len(dg.Data), dg.Data == nil, dg.Truncated}
						}
					})
					return ch
				}
				ch := sizesOf(b)
				uv.UvtMust(t, b.Start())
				var all, wantAll []datagramSize
				for _, n := range sizes {
					if _, err := a.WriteTo(payload(n), b.LocalAddr()); err != nil {
						t.Fatal(err)
					}
					wantAll = append(wantAll, datagramSize{n, n == 0, false})
				}
				for range sizes {
					all = append(all, uv.UvtRecv(t, ch, "datagram"))
				}
				if diff := cmp.Diff(wantAll, all); diff != "" {
					t.Errorf("callbacks at the edges (-want +got):\n%s", diff)
				}
				// Kept while started without a callback, then handed over to
				// the first: by a, which no ReadFrom gave a read lane (b's
				// leaves what nobody asks for in the socket).
				uv.UvtMust(t, a.Start())
				for _, n := range sizes {
					if _, err := b.WriteTo(payload(n), a.LocalAddr()); err != nil {
						t.Fatal(err)
					}
				}
				uv.UvtWaitFor(t, "the datagrams kept", func() bool {
					in, _ := udpCounts(t, a)
					return in == len(sizes)
				})
				ch = sizesOf(a)
				all = all[:0]
				for range sizes {
					all = append(all, uv.UvtRecv(t, ch, "datagram"))
				}
				if diff := cmp.Diff(wantAll, all); diff != "" {
					t.Errorf("kept datagrams at the edges (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestUDPReadFromBurstsNeverStall: a ReadFrom loop over 100,000 datagrams,
// sent in bursts larger than the keep (so that it fills and receiving
// stops each time), whether the UDP is stopped or started with no
// callback, never stalls: a reader taking kept datagrams starts receiving
// again. Every datagram is read once, in order, or counted as dropped; the
// pure-Go driver drops none (the libuv driver drops, and counts, what
// libuv's pass read past the keep's room, as documented).
func TestUDPReadFromBurstsNeverStall(t *testing.T) {
	const burst = 100 // more than the keep, fewer than the socket's buffer holds
	bursts := 1000
	if testing.Short() {
		bursts = 100
	}
	for _, started := range []bool{false, true} {
		t.Run(fmt.Sprintf("started=%v", started), func(t *testing.T) {
			eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
				if started {
					uv.UvtMust(t, b.Start())
				}
				buf := make([]byte, 16)
				seen, last := 0, -1
				for r := range bursts {
					// The safety deadline bounds a burst, not the whole run,
					// which takes longer than it under load (-race on shared
					// cores): only a ReadFrom that waits for ever fails.
					uv.UvtMust(t, b.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
					for i := range burst {
						writeTo(t, a, b, strconv.Itoa(r*burst+i))
					}
					total := (r + 1) * burst
					for {
						// Every datagram not yet received by the loop will
						// be: a waiting ReadFrom gets one, so it never waits
						// for a datagram dropped. Once all are in, what is
						// neither read nor dropped is kept.
						in, dropped := udpCounts(t, b)
						if in == total && seen+dropped == total {
							break
						}
						k, _, err := b.ReadFrom(buf)
						if err != nil {
							t.Fatalf("ReadFrom after %d read: %v (%s, the kernel's drops %d)", seen, err, b.Info(), kernelDrops(t, b.LocalAddr()))
						}
						i, _ := strconv.Atoi(string(buf[:k]))
						if i <= last {
							t.Fatalf("read %d after %d (%s)", i, last, b.Info())
						}
						last = i
						seen++
					}
				}
				checkUDPAccount(t, u, b, seen, bursts*burst)
			})
		})
	}
}

// TestUDPStopInCallbackMixedWithReadFrom: a callback that stops its UDP
// after each datagram, and a goroutine that takes the next one with
// ReadFrom and then starts the UDP for the one after: the two together
// see every datagram of the burst once, in order, or it is counted as
// dropped (none on the pure-Go driver), and in = seen + dropped.
func TestUDPStopInCallbackMixedWithReadFrom(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		const n = 200
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		got := stopAfterEach(t, b, n)
		var seen []int
		add := func(s string) {
			i, _ := strconv.Atoi(s)
			if len(seen) > 0 && i <= seen[len(seen)-1] {
				t.Fatalf("datagram %d after %d", i, seen[len(seen)-1])
			}
			seen = append(seen, i)
		}
		// All in and each seen or dropped: nothing is left to wait for.
		done := func() bool {
			in, dropped := udpCounts(t, b)
			return in == n && len(seen)+dropped == n
		}
		buf := make([]byte, 16)
		for !done() {
			k, _, err := b.ReadFrom(buf)
			uv.UvtMust(t, err)
			add(string(buf[:k]))
			uv.UvtMust(t, b.Start())
			uv.UvtWaitFor(t, "a datagram, or the rest seen or dropped", func() bool { return len(got) > 0 || done() })
			if len(got) > 0 {
				add(<-got)
			}
		}
		checkUDPAccount(t, u, b, len(seen), n)
	})
}

// TestUDPCloseInCallbackMidBurst: a callback that closes its UDP in the
// middle of a batch ends the delivery there: no callback after the Close,
// a ReadFrom after it fails with ErrClosed, and the reactor holds no UDP.
func TestUDPCloseInCallbackMidBurst(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		const n = 100
		for i := range n {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		calls := make(chan int, n)
		_, err := b.OnDatagram(func(d uv.Datagram, err error) {
			i, _ := strconv.Atoi(string(d.Data))
			calls <- i
			if i == 5 {
				b.Close()
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.Start())
		uv.UvtWaitFor(t, "the sixth datagram", func() bool { return len(calls) >= 6 })
		if _, _, err := b.ReadFrom(make([]byte, 16)); !errors.Is(err, uv.ErrClosed) {
			t.Errorf("ReadFrom after Close = %v, want ErrClosed", err)
		}
		close(calls)
		var all []int
		for i := range calls {
			all = append(all, i)
		}
		if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5}, all); diff != "" {
			t.Errorf("callbacks (-want +got):\n%s", diff)
		}
	})
}

// TestUDPHiddenWithFullKeepLetsRunEnd: a hidden UDP never keeps Run going,
// whatever its receiving: a callback stops it after the first datagram of
// a burst, the rest fill the keep (receiving stops), and it is started
// again with its keep full while a visible trigger kept Run going; once the
// trigger closes, Run ends, on both drivers.
func TestUDPHiddenWithFullKeepLetsRunEnd(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		a, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		b, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		keep, err := uv.NewTrigger(u.Reactor) // the visible event
		uv.UvtMust(t, err)
		uv.UvtMust(t, keep.Start())
		_, err = event.Subscribe(keep, func(event.Event, any, error) {
			if err := b.Start(); err != nil {
				t.Errorf("Start with the keep full: %v", err)
			}
			keep.Close()
		})
		uv.UvtMust(t, err)
		_, err = b.OnDatagram(func(uv.Datagram, error) { b.Stop() })
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.SetHidden(true))
		uv.UvtMust(t, b.Start())
		for i := range 100 {
			writeTo(t, a, b, strconv.Itoa(i))
		}
		go func() {
			// the first delivered, the keep full behind it
			for {
				if in, _ := udpCounts(t, b); in >= 65 {
					break
				}
				runtime.Gosched()
			}
			keep.Send()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if err := u.Run(ctx); err != nil {
			t.Fatalf("Run = %v (%s), want it ended once the trigger closed", err, b.Info())
		}
		if n := u.Stats().Active; n != 0 {
			t.Errorf("Active = %d after Run, want 0", n)
		}
		a.Close()
		b.Close()
		udpShutdown(t, u)
	})
}

// TestUDPStopStartChurn: Stop and Start from another goroutine while
// bursts are received (each burst larger than the keep): every datagram
// reaches the callback once, in order, or is counted as dropped, and in =
// delivered + dropped; the pure-Go driver drops none. Ends started, so
// every burst is taken in the end: no stall.
func TestUDPStopStartChurn(t *testing.T) {
	eachUDPPair(t, "udp4", func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
		const bursts, burst = 200, 100
		var delivered atomic.Int64
		last := -1
		_, err := b.OnDatagram(func(d uv.Datagram, err error) {
			if err != nil {
				t.Errorf("callback: %v", err)
				return
			}
			i, _ := strconv.Atoi(string(d.Data))
			if i <= last {
				t.Errorf("datagram %d after %d", i, last)
			}
			last = i
			delivered.Add(1)
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, b.Start())
		for r := range bursts {
			for i := range burst {
				writeTo(t, a, b, strconv.Itoa(r*burst+i))
			}
			for k := range r % 7 {
				uv.UvtMust(t, b.Stop())
				for range k {
					runtime.Gosched()
				}
				uv.UvtMust(t, b.Start())
			}
			total := (r + 1) * burst
			uv.UvtWaitFor(t, "the burst delivered or dropped", func() bool {
				_, dropped := udpCounts(t, b)
				return int(delivered.Load())+dropped == total
			})
		}
		checkUDPAccount(t, u, b, int(delivered.Load()), bursts*burst)
	})
}

// kernelDrops is the drops column of /proc/net/udp (or udp6) for the
// socket bound to addr: the datagrams the kernel dropped for it, its
// receive buffer full.
func kernelDrops(t *testing.T, addr net.Addr) int {
	t.Helper()
	ua := addr.(*net.UDPAddr)
	file, ip := "/proc/net/udp", ua.IP.To4()
	if ip == nil {
		file, ip = "/proc/net/udp6", ua.IP.To16()
	}
	// The address as the kernel prints it: each 32-bit word in host
	// (little-endian) order.
	var hex strings.Builder
	for w := 0; w < len(ip); w += 4 {
		fmt.Fprintf(&hex, "%02X%02X%02X%02X", ip[w+3], ip[w+2], ip[w+1], ip[w])
	}
	want := fmt.Sprintf("%s:%04X", hex.String(), ua.Port)
	b, err := os.ReadFile(file)
	uv.UvtMust(t, err)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 13 && f[1] == want {
			n, err := strconv.Atoi(f[12])
			uv.UvtMust(t, err)
			return n
		}
	}
	t.Fatalf("no socket bound to %v in %s", addr, file)
	return 0
}
