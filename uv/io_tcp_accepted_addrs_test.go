package uv_test

import (
	"context"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/uv"
)

// linkLocal returns an IPv6 link-local address of an interface that is up,
// with its zone, as package net writes it ("fe80::1%eth0"); "" when there
// is none.
func linkLocal() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast() {
				return n.IP.String() + "%" + ifi.Name
			}
		}
	}
	return ""
}

// An accepted connection's addresses read as package net's do, on either
// driver: a dual-stack "tcp" listener's IPv4 peer (an IPv4-mapped address)
// and an IPv6 link-local peer, whose zone net names by its interface
// ("%eth0"), as its Dial and Listen take it.
func TestAcceptedAddrsReadAsNets(t *testing.T) {
	cases := []struct{ name, network, listen, dial, dialTo string }{
		{"dual-stack, IPv4 peer", "tcp", ":0", "tcp4", "127.0.0.1"},
	}
	if ll := linkLocal(); ll != "" {
		cases = append(cases, struct{ name, network, listen, dial, dialTo string }{
			"IPv6 link-local", "tcp6", net.JoinHostPort(ll, "0"), "tcp6", ll,
		})
	} else {
		t.Log("no interface has an IPv6 link-local address: the zone's case is not run")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				defer cancel()
				stop := uv.UvtServe(t, u)
				defer stop()
				ln, err := uv.Listen(u.Reactor, c.network, c.listen)
				uv.UvtMust(t, err)
				defer ln.Close()
				acc := make(chan *uv.IO, 1)
				go func() {
					s, err := ln.AcceptIO(ctx)
					if err != nil {
						t.Errorf("AcceptIO: %v", err)
					}
					acc <- s
				}()
				_, port, err := net.SplitHostPort(ln.Addr().String())
				uv.UvtMust(t, err)
				client, err := net.Dial(c.dial, net.JoinHostPort(c.dialTo, port))
				uv.UvtMust(t, err)
				defer client.Close()
				s := uv.UvtRecv(t, acc, "the accepted connection")
				if s == nil {
					t.FailNow()
				}
				defer s.Close()
				// What net's own server side would read: the client's ends
				// seen from the other side.
				want := [2]string{client.RemoteAddr().String(), client.LocalAddr().String()}
				var got [2]string
				if a := s.LocalAddr(); a != nil {
					got[0] = a.String()
				}
				if a := s.RemoteAddr(); a != nil {
					got[1] = a.String()
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("accepted connection's [LocalAddr, RemoteAddr] (-net's +got):\n%s", diff)
				}
			})
		})
	}
}
