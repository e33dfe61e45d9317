//go:build cgo

package uvcgo

import (
	"fmt"
	"net"
	"syscall"
	"testing"
)

// newUDP opens a batched UDP on l, bound to 127.0.0.1, receiving for id;
// it returns the handle and its address.
func newUDP(t *testing.T, l *Loop, id uint64) (Handle, *net.UDPAddr) {
	t.Helper()
	h, err := l.NewUDP(id, syscall.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.BindUDP(h, []byte{127, 0, 0, 1}, 0, 0, false, false); err != nil {
		t.Fatal(err)
	}
	_, port, _, err := l.UDPAddr(h)
	if err != nil {
		t.Fatal(err)
	}
	if !l.UDPBatched(h) {
		t.Fatal("the UDP does not receive in batches (recvmmsg)")
	}
	if err := l.UDPRecvStart(h); err != nil {
		t.Fatal(err)
	}
	return h, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
}

// TestUDPBatchesShareTheLoopsBlock: the datagrams of many recvmmsg
// batches, on two UDPs of one loop, all arrive whole and from their
// sender, read through one block the loop malloc'd once.
func TestUDPBatchesShareTheLoopsBlock(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	ha, a := newUDP(t, l, 1)
	hb, b := newUDP(t, l, 2)
	from, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	fromPort := from.LocalAddr().(*net.UDPAddr).Port
	got := map[string]bool{}
	const rounds, each = 5, 30
	for r := range rounds {
		want := map[string]bool{}
		for i := range each {
			for id, to := range map[uint64]*net.UDPAddr{1: a, 2: b} {
				msg := fmt.Sprintf("%d/%d/%d", id, r, i)
				if _, err := from.WriteToUDP([]byte(msg), to); err != nil {
					t.Fatal(err)
				}
				want[msg] = true
			}
		}
		turnUntil(t, l, func(done []Completion) bool {
			for i := range done {
				c := &done[i]
				if c.Kind != CompletionUDPRecv {
					continue
				}
				if c.Status != 0 {
					t.Fatalf("a receive failed: status %d", c.Status)
				}
				p, s, trunc := Datagram(c)
				if trunc || s.Port != fromPort || net.IP(s.IP[:s.IPLen]).String() != "127.0.0.1" {
					t.Fatalf("datagram %q from %v:%d, truncated %v; want from 127.0.0.1:%d", p, s.IP[:s.IPLen], s.Port, trunc, fromPort)
				}
				if msg := string(p); msg[:1] != fmt.Sprint(c.ID) {
					t.Fatalf("datagram %q reported for UDP %d", msg, c.ID)
				}
				got[string(p)] = true
			}
			for m := range want {
				if !got[m] {
					return false
				}
			}
			return true
		})
	}
	if len(got) != 2*rounds*each {
		t.Fatalf("received %d distinct datagrams, want %d", len(got), 2*rounds*each)
	}
	if n := l.udpBlocks(); n != 1 {
		t.Fatalf("recvmmsg blocks malloc'd: %d, want 1 (the loop's)", n)
	}
	l.CloseHandle(ha)
	l.CloseHandle(hb)
	turnUntil(t, l, func([]Completion) bool { return l.Handles() == 0 })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
