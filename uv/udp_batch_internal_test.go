package uv

import (
	"testing"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// TestUDPReceivesInBatches: a UDP reads its datagrams in batches: libuv's
// handle uses recvmmsg (UV_UDP_RECVMMSG), and on the pure-Go driver one
// recvmmsg takes all the datagrams waiting, up to udpBatch.
func TestUDPReceivesInBatches(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := UvtNewReactorOn(t, d)
		a, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		UvtMust(t, err)
		b, err := ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
		UvtMust(t, err)
		for range udpBatch + 5 {
			_, err := a.WriteTo([]byte("x"), b.LocalAddr())
			UvtMust(t, err)
		}
		UvtMust(t, u.Call(func() {
			switch e := b.Target().(type) {
			case *udpEvent:
				if !e.loop.UDPBatched(e.h) {
					t.Error("the libuv handle does not use recvmmsg")
				}
			case *goUDP:
				bufs := udpBatches.Get().(*udpBatchBufs)
				defer udpBatches.Put(bufs)
				if got, err := bufs.recv(e.fd, udpBatch); got != udpBatch || err != nil {
					t.Errorf("one recvmmsg = %d, %v; want %d", got, err, udpBatch)
				}
				if d := bufs.datagram(udpBatch - 1); string(d.Data) != "x" || d.Addr.String() != a.LocalAddr().String() {
					t.Errorf("the last datagram = %q from %v", d.Data, d.Addr)
				}
			}
		}))
		a.Close()
		b.Close()
		UvtShutdown(t, u, false)
	})
}
