package uv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"

	uvcgo "github.com/uvevent/uvevent/cgo"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// The lookup errors, one for each of getaddrinfo's EAI_* codes. A failed
// AddrInfo or NameInfo reports a *DNSError that matches one of them with
// errors.Is.
var (
	ErrAddrFamily = errors.New("uv: address family for host not supported (EAI_ADDRFAMILY)")
	ErrTryAgain   = errors.New("uv: temporary failure (EAI_AGAIN)")
	ErrBadFlags   = errors.New("uv: bad flags (EAI_BADFLAGS)")
	ErrBadHints   = errors.New("uv: invalid value for hints (EAI_BADHINTS)")
	ErrCanceled   = errors.New("uv: request canceled (EAI_CANCELED)")
	ErrFail       = errors.New("uv: permanent failure (EAI_FAIL)")
	ErrFamily     = errors.New("uv: address family not supported (EAI_FAMILY)")
	ErrNoMemory   = errors.New("uv: out of memory (EAI_MEMORY)")
	ErrNoData     = errors.New("uv: no address (EAI_NODATA)")
	ErrNoName     = errors.New("uv: unknown node or service (EAI_NONAME)")
	ErrOverflow   = errors.New("uv: argument buffer overflow (EAI_OVERFLOW)")
	ErrProtocol   = errors.New("uv: resolved protocol is unknown (EAI_PROTOCOL)")
	ErrService    = errors.New("uv: service not available for socket type (EAI_SERVICE)")
	ErrSockType   = errors.New("uv: socket type not supported (EAI_SOCKTYPE)")
)

// eaiErrors maps libuv's UV_EAI_* codes to the errors above: the one list.
var eaiErrors = map[int]error{
	uvcgo.EAIAddrFamily: ErrAddrFamily,
	uvcgo.EAIAgain:      ErrTryAgain,
	uvcgo.EAIBadFlags:   ErrBadFlags,
	uvcgo.EAIBadHints:   ErrBadHints,
	uvcgo.EAICanceled:   ErrCanceled,
	uvcgo.EAIFail:       ErrFail,
	uvcgo.EAIFamily:     ErrFamily,
	uvcgo.EAIMemory:     ErrNoMemory,
	uvcgo.EAINoData:     ErrNoData,
	uvcgo.EAINoName:     ErrNoName,
	uvcgo.EAIOverflow:   ErrOverflow,
	uvcgo.EAIProtocol:   ErrProtocol,
	uvcgo.EAIService:    ErrService,
	uvcgo.EAISockType:   ErrSockType,
}

// DNSError is a failed lookup: the operation, what was looked up, and
// libuv's code. errors.Is matches it against the Err* values above for
// EAI_* codes, and against syscall.Errno values for the others.
type DNSError struct {
	Op   string // "uv_getaddrinfo" or "uv_getnameinfo"
	Name string // the host (and service) or the address looked up
	Code int    // libuv's negative code, e.g. UV_EAI_NONAME
}

func dnsError(op, name string, code int) error {
	if code == 0 {
		return nil
	}
	return &DNSError{Op: op, Name: name, Code: code}
}

// Error says what failed and how: `uv_getaddrinfo "x": EAI_NONAME (unknown
// node or service)`.
func (e *DNSError) Error() string {
	name, msg := uvcgo.ErrorName(e.Code)
	return fmt.Sprintf("%s %q: %s (%s)", e.Op, e.Name, name, msg)
}

// Unwrap returns the EAI_* error, or, for other codes, the libuv error
// (which unwraps to its syscall.Errno).
func (e *DNSError) Unwrap() error {
	if err, ok := eaiErrors[e.Code]; ok {
		return err
	}
	return uvcgo.ErrorOf(e.Op, e.Code)
}

// AddrInfoHints shape an AddrInfo lookup.
type AddrInfoHints struct {
	// Network is "ip" (the default when empty: every address once),
	// "ip4", "ip6", "tcp", "tcp4", "tcp6", "udp", "udp4" or "udp6": the
	// family (4, 6 or both) and socket type the addresses are for.
	Network string
	// NumericHost (AI_NUMERICHOST): the host must be a literal address;
	// nothing is looked up, and a name fails with ErrNoName.
	NumericHost bool
	// NumericService (AI_NUMERICSERV): the service must be a port number.
	NumericService bool
	// Passive (AI_PASSIVE): with no host, the wildcard address (to bind)
	// instead of the loopback one.
	Passive bool
}

// An AddrInfo is a getaddrinfo lookup (uv_getaddrinfo, on libuv's thread
// pool) as a one-shot event: its result is the []netip.AddrPort of the
// answer, in the resolver's order (the port is the service's, or 0); its
// error a *DNSError. The result is stored and replayed to late
// subscribers; callbacks must not modify the slice.
//
// The answer is copied out of libuv's addrinfo list in the C callback,
// which frees the list at once (uv_freeaddrinfo) and hands Go one flat
// array; Go converts it to netip values while the record is delivered, and
// the array is freed after that loop turn.
//
// A lookup in flight counts as active: it keeps Run going and is no
// deadlock. Closing or disposing it before it completes cancels it where
// libuv can (a lookup a pool thread already runs completes unseen); its C
// memory is freed exactly once, by libuv's callback, and no callback hears
// of the answer. An AddrInfo is a Go-owned event: dropping it without Close
// is safe (the request completes and frees itself).
type AddrInfo struct {
	reqCore
	host, service, network string
	n                      int // addresses in the answer, for Info
}

// NewAddrInfo starts looking up host and service (either may be empty, not
// both) on r. Bad hints are refused with an error matching
// syscall.EINVAL.
func NewAddrInfo(r *reactor.Reactor, host, service string, hints AddrInfoHints) (*AddrInfo, error) {
	network := hints.Network
	if network == "" {
		network = "ip"
	}
	family, sockType, ok := addrInfoNetwork(network)
	if !ok || host == "" && service == "" || strings.IndexByte(host+service, 0) >= 0 {
		return nil, fmt.Errorf("uv: NewAddrInfo(%q, %q, %q): %w", host, service, network, syscall.EINVAL)
	}
	var flags int
	for _, f := range []struct {
		on   bool
		flag int
	}{{hints.NumericHost, uvcgo.AINumericHost}, {hints.NumericService, uvcgo.AINumericServ}, {hints.Passive, uvcgo.AIPassive}} {
		if f.on {
			flags |= f.flag
		}
	}
	a := &AddrInfo{host: host, service: service, network: network}
	if err := submitReq(r, &a.reqCore, a, func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.GetAddrInfo(id, host, service, family, sockType, flags)
	}); err != nil {
		return nil, err
	}
	return a, nil
}

// addrInfoNetwork turns a network name into getaddrinfo's family and
// socket type. "ip" asks for stream sockets, so that each address comes
// once rather than once per socket type.
func addrInfoNetwork(network string) (family, sockType int, ok bool) {
	base, v := network, ""
	if n := len(network); n > 0 && (network[n-1] == '4' || network[n-1] == '6') {
		base, v = network[:n-1], network[n-1:]
	}
	switch v {
	case "":
		family = uvcgo.AFUnspec
	case "4":
		family = uvcgo.AFInet
	case "6":
		family = uvcgo.AFInet6
	}
	switch base {
	case "ip", "tcp":
		return family, uvcgo.SockStream, true
	case "udp":
		return family, uvcgo.SockDgram, true
	}
	return 0, 0, false
}

// Wait waits for the answer (or replays it once it is in). It must not be
// called on the loop goroutine (event.ErrOnLoop): subscribe there instead.
func (a *AddrInfo) Wait(ctx context.Context) ([]netip.AddrPort, error) {
	res, err := waitReq(ctx, a)
	addrs, _ := res.([]netip.AddrPort)
	return addrs, err
}

// waitReq awaits one request event and returns its outcome.
func waitReq(ctx context.Context, ev event.Event) (any, error) {
	outs, err := event.Await(ctx, event.Any(), ev)
	if len(outs) == 1 {
		return outs[0].Result, outs[0].Err
	}
	return nil, err
}

func (a *AddrInfo) kindName() string { return "addrinfo" }

func (a *AddrInfo) describe() string {
	s := fmt.Sprintf("AddrInfo(host=%q, service=%q, network=%s", a.host, a.service, a.network)
	if st := a.reqCore.state(); st != "" {
		return s + ", " + st + ")"
	}
	return s + fmt.Sprintf(", addrs=%d)", a.n)
}

// state names a request's state for its Info line: "pending", "closed"
// (before it completed), "failed", or "" once it holds a result.
func (c *reqCore) state() string {
	switch {
	case c.over && c.err != nil:
		return "failed"
	case c.over:
		return ""
	case c.Flags().Has(event.Closed):
		return "closed"
	}
	return "pending"
}

func (a *AddrInfo) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status != 0 {
		return nil, dnsError("uv_getaddrinfo", a.host+a.colonService(), int(rec.Status))
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
	a.n = len(addrs)
	return addrs, nil
}

func (a *AddrInfo) colonService() string {
	if a.service == "" {
		return ""
	}
	return ":" + a.service
}

func (a *AddrInfo) cancel(req uvcgo.Request) { a.loop.CancelDNS(req) }

// NameInfoHints shape a NameInfo lookup (getnameinfo's NI_* flags).
type NameInfoHints struct {
	NumericHost    bool // NI_NUMERICHOST: the address as text, no lookup
	NumericService bool // NI_NUMERICSERV: the port as a number
	NameRequired   bool // NI_NAMEREQD: fail (ErrNoName) rather than give the address as text
	Datagram       bool // NI_DGRAM: the service name for UDP, not TCP
	NoFQDN         bool // NI_NOFQDN: only the host part of a local name
}

// NameInfoResult is the answer of a NameInfo lookup.
type NameInfoResult struct {
	Host    string
	Service string
}

// A NameInfo is a getnameinfo lookup (uv_getnameinfo, on libuv's thread
// pool) of an address and port as a one-shot event: its result is a
// NameInfoResult, its error a *DNSError. Everything AddrInfo says of
// storing, cancelling and lifetime holds for it too.
type NameInfo struct {
	reqCore
	addr netip.AddrPort
}

// NewNameInfo starts looking up the host and service names of addr on r.
// An invalid address is refused with an error matching syscall.EINVAL.
func NewNameInfo(r *reactor.Reactor, addr netip.AddrPort, hints NameInfoHints) (*NameInfo, error) {
	ip := addr.Addr()
	if !ip.IsValid() {
		return nil, fmt.Errorf("uv: NewNameInfo(%v): invalid address: %w", addr, syscall.EINVAL)
	}
	family, zone := uvcgo.AFInet6, uint32(0)
	if ip.Is4() {
		family = uvcgo.AFInet
	} else if z := ip.Zone(); z != "" {
		if _, err := fmt.Sscan(z, &zone); err != nil {
			ifi, err := net.InterfaceByName(z)
			if err != nil {
				return nil, fmt.Errorf("uv: NewNameInfo(%v): zone: %w", addr, errors.Join(err, syscall.EINVAL))
			}
			zone = uint32(ifi.Index)
		}
	}
	var flags int
	for _, f := range []struct {
		on   bool
		flag int
	}{
		{hints.NumericHost, uvcgo.NINumericHost}, {hints.NumericService, uvcgo.NINumericServ},
		{hints.NameRequired, uvcgo.NINameReqd}, {hints.Datagram, uvcgo.NIDgram}, {hints.NoFQDN, uvcgo.NINoFQDN},
	} {
		if f.on {
			flags |= f.flag
		}
	}
	var raw [16]byte
	if ip.Is4() {
		b := ip.As4()
		copy(raw[:], b[:])
	} else {
		raw = ip.As16()
	}
	n := &NameInfo{addr: addr}
	if err := submitReq(r, &n.reqCore, n, func(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
		return l.GetNameInfo(id, family, raw, int(addr.Port()), zone, flags)
	}); err != nil {
		return nil, err
	}
	return n, nil
}

// Wait waits for the answer (or replays it once it is in). It must not be
// called on the loop goroutine (event.ErrOnLoop): subscribe there instead.
func (n *NameInfo) Wait(ctx context.Context) (NameInfoResult, error) {
	res, err := waitReq(ctx, n)
	r, _ := res.(NameInfoResult)
	return r, err
}

func (n *NameInfo) kindName() string { return "nameinfo" }

func (n *NameInfo) describe() string {
	s := fmt.Sprintf("NameInfo(addr=%v", n.addr)
	if st := n.reqCore.state(); st != "" {
		return s + ", " + st + ")"
	}
	r := n.res.(NameInfoResult)
	return s + fmt.Sprintf(", host=%q, service=%q)", r.Host, r.Service)
}

func (n *NameInfo) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status != 0 {
		return nil, dnsError("uv_getnameinfo", n.addr.String(), int(rec.Status))
	}
	host, service := uvcgo.NameInfoStrings(rec)
	return NameInfoResult{Host: host, Service: service}, nil
}

func (n *NameInfo) cancel(req uvcgo.Request) { n.loop.CancelDNS(req) }
