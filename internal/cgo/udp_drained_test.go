//go:build cgo

package uvcgo

import (
	"fmt"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUDPShortBatchAtTheEndOfLibuvsBudgetEndsOnlyItsPass: libuv 1.44 reads
// at most 32 datagrams per readiness pass (uv__udp_recvmsg's count), so a
// burst of 32 is read as a batch of 20 and a short one of 12, after which
// libuv ends the pass itself, its budget spent. The short batch marks the
// socket drained, which is to end the pass it belongs to (uvev__on_udp_alloc);
// a mark the pass never consumed must not end the next pass, which a new
// datagram starts, before it reads anything. So the datagram sent after
// each burst arrives in the first turn that finds it waiting.
func TestUDPShortBatchAtTheEndOfLibuvsBudgetEndsOnlyItsPass(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	h, to := newUDP(t, l, 1)
	fd, err := l.Fileno(h)
	if err != nil {
		t.Fatal(err)
	}
	from, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	received := func(done []Completion) int {
		n := 0
		for i := range done {
			if c := &done[i]; c.Kind == CompletionUDPRecv {
				if c.Status != 0 {
					t.Fatalf("a receive failed: status %d", c.Status)
				}
				n++
			}
		}
		return n
	}
	send := func(msg string) {
		if _, err := from.WriteToUDP([]byte(msg), to); err != nil {
			t.Fatal(err)
		}
	}
	const burst = 32 // libuv's budget per pass: a batch of 20, then one of 12
	for round := range 5 {
		for i := range burst {
			send(fmt.Sprintf("%d/%d", round, i))
		}
		got := 0
		turnUntil(t, l, func(done []Completion) bool {
			got += received(done)
			return got >= burst
		})
		send(fmt.Sprintf("%d/lone", round))
		// The datagram is in the socket's queue before the turn looks.
		if n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000); n != 1 || err != nil {
			t.Fatalf("round %d: the lone datagram never made the socket readable (poll %d, %v)", round, n, err)
		}
		done, _ := l.Turn()
		if n := received(done); n != 1 {
			turns := 1
			turnUntil(t, l, func(done []Completion) bool {
				turns++
				return received(done) > 0
			})
			t.Fatalf("round %d: the turn that found the lone datagram after a burst of %d delivered %d datagrams; it came %d turns later", round, burst, n, turns)
		}
	}
	l.CloseHandle(h)
	turnUntil(t, l, func([]Completion) bool { return l.Handles() == 0 })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
