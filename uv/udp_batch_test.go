package uv_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// receivedDatagram is what TestUDPBatchedReceive checks of a datagram.
type receivedDatagram struct {
	Data      string
	From      string
	Truncated bool
}

// TestUDPBatchedReceive: datagrams waiting in the socket when the UDP
// starts are read in batches (recvmmsg, up to 20 a call) and reach the
// callbacks one by one, in order, each with its own bytes and sender, on
// both drivers and both families: 64 of them (more than one turn's 32,
// fewer than the socket's buffer holds), an empty one and the largest
// IPv4 datagram, truncated, among them.
func TestUDPBatchedReceive(t *testing.T) {
	for _, network := range []string{"udp4", "udp6"} {
		t.Run(network, func(t *testing.T) {
			eachUDPPair(t, network, func(t *testing.T, u *uv.UvtReactor, a, b *uv.UDP) {
				const n = 64
				big := make([]byte, 65535-20-8) // the largest IPv4 UDP payload
				var want []receivedDatagram
				for i := range n {
					p := fmt.Sprintf("datagram %d", i)
					switch i {
					case 10:
						p = ""
					case 11:
						p = string(big)
					}
					if _, err := a.WriteTo([]byte(p), b.LocalAddr()); err != nil {
						t.Fatal(err)
					}
					if i == 11 {
						p = p[:uv.UvtUDPRoom]
					}
					want = append(want, receivedDatagram{p, a.LocalAddr().String(), i == 11})
				}
				ch := make(chan receivedDatagram, n)
				event.Subscribe(b, func(_ event.Event, res any, err error) {
					if dg, ok := res.(*uv.Datagram); ok {
						ch <- receivedDatagram{string(dg.Data), dg.Addr.String(), dg.Truncated}
					} else if !errors.Is(err, event.ErrClosed) { // the close is heard too
						t.Errorf("callback: %v", err)
					}
				})
				uv.UvtMust(t, b.Start())
				var got []receivedDatagram
				for range n {
					got = append(got, uv.UvtRecv(t, ch, "datagram"))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("datagrams (-want +got):\n%s", diff)
				}
			})
		})
	}
}
