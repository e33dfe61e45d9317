package uv

// The libuv driver's lookups: uv_getaddrinfo and uv_getnameinfo requests
// (internal/cgo/dns.c) completing AddrInfo and NameInfo.

import (
	"fmt"
	"net/netip"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

func (a *AddrInfo) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status != 0 {
		return nil, dnsError("uv_getaddrinfo", a.errName(), int(rec.Status))
	}
	entries := uvcgo.AddrInfoEntries(rec) // C memory, read now
	addrs := make([]netip.AddrPort, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		var ip netip.Addr
		if e.Family == uvcgo.AFInet {
			ip = netip.AddrFrom4([4]byte(e.Addr[:4]))
		} else {
			ip = netip.AddrFrom16(e.Addr)
			if e.Zone != 0 {
				ip = ip.WithZone(fmt.Sprint(e.Zone))
			}
		}
		addrs = append(addrs, netip.AddrPortFrom(ip, e.Port))
	}
	return addrs, nil
}

func (a *AddrInfo) cancel(req uvcgo.Request) { a.loop.CancelDNS(req) }

func (n *NameInfo) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status != 0 {
		return nil, dnsError("uv_getnameinfo", n.addr.String(), int(rec.Status))
	}
	host, service := uvcgo.NameInfoStrings(rec)
	return NameInfoResult{Host: host, Service: service}, nil
}

func (n *NameInfo) cancel(req uvcgo.Request) { n.loop.CancelDNS(req) }
