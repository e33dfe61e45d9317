package uv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
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

// eaiCodes is the one list of libuv's UV_EAI_* codes: the error each
// maps to, its name and libuv's message for it (uv_err_name, uv_strerror),
// so that a DNSError reads the same on both drivers.
var eaiCodes = map[int]struct {
	err           error
	name, message string
}{
	uvcgo.EAIAddrFamily: {ErrAddrFamily, "EAI_ADDRFAMILY", "address family not supported"},
	uvcgo.EAIAgain:      {ErrTryAgain, "EAI_AGAIN", "temporary failure"},
	uvcgo.EAIBadFlags:   {ErrBadFlags, "EAI_BADFLAGS", "bad ai_flags value"},
	uvcgo.EAIBadHints:   {ErrBadHints, "EAI_BADHINTS", "invalid value for hints"},
	uvcgo.EAICanceled:   {ErrCanceled, "EAI_CANCELED", "request canceled"},
	uvcgo.EAIFail:       {ErrFail, "EAI_FAIL", "permanent failure"},
	uvcgo.EAIFamily:     {ErrFamily, "EAI_FAMILY", "ai_family not supported"},
	uvcgo.EAIMemory:     {ErrNoMemory, "EAI_MEMORY", "out of memory"},
	uvcgo.EAINoData:     {ErrNoData, "EAI_NODATA", "no address"},
	uvcgo.EAINoName:     {ErrNoName, "EAI_NONAME", "unknown node or service"},
	uvcgo.EAIOverflow:   {ErrOverflow, "EAI_OVERFLOW", "argument buffer overflow"},
	uvcgo.EAIProtocol:   {ErrProtocol, "EAI_PROTOCOL", "resolved protocol is unknown"},
	uvcgo.EAIService:    {ErrService, "EAI_SERVICE", "service not available for socket type"},
	uvcgo.EAISockType:   {ErrSockType, "EAI_SOCKTYPE", "socket type not supported"},
}

// DNSError is a failed lookup: the operation, what was looked up, and
// libuv's code. errors.Is matches it against the Err* values above for
// EAI_* codes, and against syscall.Errno values for the others. Code is
// the UV_EAI_* code closest to what Go's resolver reported (see dns_go.go
// and docs/kinds.md for the mapping), on both drivers, and Err is the
// resolver's own error (a *net.DNSError, say), or nil where no resolver
// was asked (a hint refused the name). A lookup that fails while the
// process has no descriptor left reports EMFILE (or ENFILE), not
// EAI_NONAME.
//
// A lookup its Context ended (AddrInfoHints.Context, NameInfoHints.Context)
// is the same on both drivers: Err is the Context's error, which errors.Is
// matches too (context.DeadlineExceeded or context.Canceled); a deadline
// is EAI_AGAIN (ErrTryAgain) with IsTimeout set, as Go's resolver reports
// a timeout, and a cancel EAI_CANCELED (ErrCanceled).
type DNSError struct {
	Op        string // "uv_getaddrinfo" or "uv_getnameinfo", on either driver
	Name      string // the host (and service) or the address looked up
	Code      int    // libuv's negative code, e.g. UV_EAI_NONAME
	Err       error  // the resolver's error, or the Context's
	IsTimeout bool   // the lookup's Context passed its deadline
}

// exhaustedCode returns libuv's -EMFILE (or -ENFILE) for a lookup that
// failed as "not found" or "try again" while the process (or the system)
// has no descriptor left, else code. getaddrinfo cannot open /etc/hosts or
// a socket then, and glibc says EAI_NONAME and Go's resolver "no such
// host": a lie about the name. The check opens and closes /dev/null at
// once, when the failure is reported.
func exhaustedCode(code int) int {
	switch code {
	case uvcgo.EAINoName, uvcgo.EAIAgain, uvcgo.EAIFail, uvcgo.EAINoData:
	default:
		return code
	}
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return code
	}
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return -int(err.(syscall.Errno))
	}
	return code
}

// Error says what failed and how: `uv_getaddrinfo "x": EAI_NONAME (unknown
// node or service)`, the same on both drivers; a lookup its Context ended
// says the Context's error after it (`...: context deadline exceeded`).
func (e *DNSError) Error() string {
	if e == nil {
		return "<nil>"
	}
	c, ok := eaiCodes[e.Code]
	if !ok {
		c.name, c.message = uvcgo.ErrorName(e.Code)
	}
	if c.name == "" && e.Code < 0 { // an errno, without libuv to name it
		c.name, c.message = unix.ErrnoName(syscall.Errno(-e.Code)), syscall.Errno(-e.Code).Error()
	}
	s := fmt.Sprintf("%s %q: %s (%s)", e.Op, e.Name, c.name, c.message)
	if ce := e.contextErr(); ce != nil {
		s += ": " + ce.Error()
	}
	return s
}

// Unwrap returns the EAI_* error, or, for other codes, the libuv error
// (which unwraps to its syscall.Errno); for a lookup its Context ended, the
// Context's error too. The resolver's own error is in Err only, so that
// errors.Is answers the same whichever resolver was asked.
func (e *DNSError) Unwrap() []error {
	if e == nil {
		return nil
	}
	var code error
	if c, ok := eaiCodes[e.Code]; ok {
		code = c.err
	} else {
		code = uvcgo.ErrorOf(e.Op, e.Code)
	}
	if ce := e.contextErr(); ce != nil {
		return []error{code, ce}
	}
	return []error{code}
}

// contextErr returns Err when it is a Context's error (what a lookup its
// Context ended holds there, never a resolver's: Go's resolver wraps its
// errors), else nil.
func (e *DNSError) contextErr() error {
	if e.Err == context.Canceled || e.Err == context.DeadlineExceeded {
		return e.Err
	}
	return nil
}

// AddrInfoHints shape an AddrInfo lookup. Every hint is honoured on both
// drivers.
type AddrInfoHints struct {
	// Network is "ip" (the default when empty: every address once),
	// "ip4", "ip6", "tcp", "tcp4", "tcp6", "udp", "udp4" or "udp6": the
	// family (4, 6 or both) and socket type the addresses are for (the
	// socket type decides whether a service name is TCP's or UDP's).
	Network string
	// NumericHost (AI_NUMERICHOST): the host must be a literal address;
	// nothing is looked up, and a name fails with ErrNoName.
	NumericHost bool
	// NumericService (AI_NUMERICSERV): the service must be a port number;
	// a name fails with ErrNoName.
	NumericService bool
	// Passive (AI_PASSIVE): with no host, the wildcard address (to bind)
	// instead of the loopback one.
	Passive bool
	// Context, if not nil, bounds the lookup, as the context of
	// net.Resolver's lookups does: when it ends before the answer, the
	// lookup completes at once with a *DNSError matching the Context's
	// error (context.DeadlineExceeded: EAI_AGAIN and IsTimeout;
	// context.Canceled: EAI_CANCELED), and is cancelled as Close cancels
	// it (its answer, should it come, is dropped). A Context already done
	// is not refused, as StartProcess refuses one: the lookup is made and
	// completes with that error on the loop's next turn, nothing looked
	// up, so that lookups made in bulk under one deadline are all
	// collected alike, and as net.Resolver reports a Context already done
	// as the lookup's error.
	Context context.Context
	// Resolver, if not nil, is the resolver asked, as net.Dialer's
	// Resolver is (one with PreferGo and a Dial of its own talks to the
	// nameserver the caller chooses); nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// The longest service getaddrinfo takes (NI_MAXSERV, less the terminating
// NUL).
const maxService = 31

// An AddrInfo is a getaddrinfo lookup as a one-shot event: its result is
// the []netip.AddrPort of the answer, in the resolver's order (the port is
// the service's, or 0); its error a *DNSError. The result is stored and
// replayed to late subscribers; callbacks must not modify the slice.
//
// On both drivers the lookup is Go's resolver (package net, or
// AddrInfoHints.Resolver) in a goroutine of its own, whose answer
// completes the event on the loop (dns_go.go), never libuv's thread pool:
// a nameserver that never answers holds a goroutine, not one of the
// pool's four threads, so that other lookups and the file requests on
// that pool go on, and the reactor's Close never waits for it
// (docs/architecture.md, "Lookups"). What getaddrinfo does with the hints
// (literal addresses, the empty host, the numeric and passive flags) is
// done here, as glibc does it.
//
// A lookup in flight counts as active: it keeps Run going and is no
// deadlock. Closing or disposing it before it completes (or the reactor's
// Close) tells its subscribers event.ErrClosed at once and cancels the
// context the resolver was given; no callback hears of the answer then,
// and nothing waits for the resolver to return. A lookup whose AddrInfoHints.Context ends first is
// cancelled the same way, but completes with the Context's error (a
// *DNSError). An AddrInfo is a Go-owned event: dropping it without Close
// is safe (the lookup completes and frees itself).
type AddrInfo struct {
	event.Base
	reqCore
	g                      *goLookup // the pure-Go driver's lookup; nil on libuv
	ctx                    lookupContext
	host, service, network string
}

// NewAddrInfo starts looking up host and service (either may be empty, not
// both) on r. Bad hints, a NUL byte, a host that is neither an address
// nor a host name in RFC 1123's syntax (labels of letters, digits,
// hyphens and underscores, 1 to 63 bytes, no hyphen first or last, no
// empty label as in "a..b", the last not all digits as in "1.2.3.4.5",
// 253 bytes at most, a trailing dot aside), a
// service longer than 31 or a port number above 65535 are refused at once,
// on both drivers alike, with an error matching syscall.EINVAL that names
// them; no resolver sees them.
func NewAddrInfo(r *reactor.Reactor, host, service string, hints AddrInfoHints) (*AddrInfo, error) {
	network := hints.Network
	if network == "" {
		network = "ip"
	}
	family, sockType, ok := addrInfoNetwork(network)
	if !ok || host == "" && service == "" || strings.IndexByte(host+service, 0) >= 0 ||
		len(service) > maxService || !portInRange(service) {
		return nil, fmt.Errorf("uv: NewAddrInfo(%q, %q, %q): %w", host, service, network, syscall.EINVAL)
	}
	if why := badName(host); why != "" {
		return nil, fmt.Errorf("uv: NewAddrInfo(%q, %q, %q): %s: %w", host, service, network, why, syscall.EINVAL)
	}
	a := &AddrInfo{host: host, service: service, network: network}
	lookup := endedLookup("uv_getaddrinfo", a.errName(), hints.Context)
	if lookup == nil {
		q := addrQuery{name: a.errName(), host: host, service: service, family: family, sockType: sockType,
			hints: hints, rs: resolverOf(hints.Resolver)}
		lookup = q.lookup
	}
	if err := submitGo(r, &a.Base, &a.reqCore, &a.g, a, lookup); err != nil {
		return nil, err
	}
	a.ctx.watch(r, &a.reqCore, hints.Context, "uv_getaddrinfo", a.errName())
	return a, nil
}

// The longest DNS name (RFC 1035: 255 bytes on the wire, 253 written
// without the root's trailing dot) and label.
const (
	maxName  = 253
	maxLabel = 63
)

// badName says why host can be no host name, or "" when it may be one:
// empty (no host: the caller decides), an address literal, or a name in
// RFC 1123's syntax — labels of 1 to 63 letters, digits and hyphens, none
// beginning or ending with a hyphen, the last not all digits, joined by
// dots, at most 253 bytes (a trailing dot, the root's, aside). An underscore is taken as a letter,
// as Go's resolver and glibc's take it (names such as _sip._tcp.example
// or a container's my_app_1). The same refusal on both drivers, before
// any resolver sees the name (resolvers answer such names differently,
// and later).
func badName(host string) string {
	if host == "" {
		return ""
	}
	if _, ok := parseLiteral(host); ok {
		return ""
	}
	name := strings.TrimSuffix(host, ".")
	if len(name) > maxName {
		return fmt.Sprintf("a name of %d bytes (a host name has at most %d)", len(name), maxName)
	}
	for label := range strings.SplitSeq(name, ".") {
		switch {
		case label == "":
			return "an empty label (a host name's labels are separated by one dot)"
		case len(label) > maxLabel:
			return fmt.Sprintf("a label of %d bytes (a host name's label has at most %d)", len(label), maxLabel)
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Sprintf("the label %q begins or ends with a hyphen", label)
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Sprintf("the byte %q in the label %q (a host name has letters, digits, hyphens, underscores and dots)", label[i:i+1], label)
			}
		}
	}
	if top := name[strings.LastIndexByte(name, '.')+1:]; strings.Trim(top, "0123456789") == "" {
		// RFC 1123 2.1: the highest-level label of a host name is never
		// numeric, so that a dotted-decimal address is never a name.
		return fmt.Sprintf("the last label %q is all digits and the host is no address", top)
	}
	return ""
}

// hostError is the error of a host that can be no host name (badName),
// matching syscall.EINVAL and naming it; nil for one that may be.
func hostError(host string) error {
	if why := badName(host); why != "" {
		return fmt.Errorf("uv: invalid host name %q: %s: %w", host, why, syscall.EINVAL)
	}
	return nil
}

// portInRange refuses a service that is a number too large for a port
// (glibc's getaddrinfo would take 70000 for 4464).
func portInRange(service string) bool {
	if service == "" || strings.Trim(service, "0123456789") != "" {
		return true
	}
	_, err := strconv.ParseUint(service, 10, 16)
	return err == nil
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

// Await waits for the answer (or replays it once it is in). When ctx ends
// first it returns no answer and ctx's error (the lookup goes on). It must
// not be called on the loop goroutine (event.ErrOnLoop): subscribe there
// instead.
func (a *AddrInfo) Await(ctx context.Context) ([]netip.AddrPort, error) {
	res, err := waitReq(ctx, a)
	addrs, _ := res.([]netip.AddrPort)
	return addrs, err
}

// waitReq awaits one request event and returns its outcome, or the wait's
// error when the wait ended before the event notified (ctx's end).
func waitReq(ctx context.Context, ev event.Event) (any, error) {
	outs, err := event.Await(ctx, event.Any(), ev)
	if err != nil || len(outs) != 1 || !outs[0].Done {
		if err == nil {
			err = event.ErrClosed // cannot happen: Any ends with one outcome or an error
		}
		return nil, err
	}
	return outs[0].Result, outs[0].Err
}

func (a *AddrInfo) kindName() string { return "addrinfo" }

func (a *AddrInfo) describe() string {
	s := fmt.Sprintf("AddrInfo(host=%q, service=%q, network=%s", a.host, a.service, a.network)
	if st := a.reqCore.state(); st != "" {
		return s + ", " + st + ")"
	}
	return s + fmt.Sprintf(", addrs=%d)", len(a.res.([]netip.AddrPort)))
}

// state names a request's state for its Info line: "pending", "closed"
// (before it completed), "failed", or "" once it holds a result.
func (c *reqCore) state() string {
	switch {
	case c.over && c.err != nil:
		return "failed"
	case c.over:
		return ""
	case c.b.Flags().Has(event.Closed):
		return "closed"
	}
	return "pending"
}

// errName is what a failed lookup's DNSError names: the host, and the
// service after a colon.
func (a *AddrInfo) errName() string {
	if a.service == "" {
		return a.host
	}
	return a.host + ":" + a.service
}

// NameInfoHints shape a NameInfo lookup (getnameinfo's NI_* flags). Every
// hint is honoured on both drivers.
type NameInfoHints struct {
	NumericHost    bool // NI_NUMERICHOST: the address as text, no lookup
	NumericService bool // NI_NUMERICSERV: the port as a number
	NameRequired   bool // NI_NAMEREQD: fail (ErrNoName) rather than give the address as text
	Datagram       bool // NI_DGRAM: the service name for UDP, not TCP
	NoFQDN         bool // NI_NOFQDN: only the host part of a name in the local domain
	// Context, if not nil, bounds the lookup as AddrInfoHints.Context
	// does (one already done completes the lookup with its error).
	Context context.Context
	// Resolver, if not nil, is the resolver asked for the host's name
	// (AddrInfoHints.Resolver); nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// NameInfoResult is the answer of a NameInfo lookup.
type NameInfoResult struct {
	Host    string // the host's name (or its address as text, with NameRequired unset)
	Service string // the service's name (or the port as text)
}

// A NameInfo is a getnameinfo lookup of an address and port as a one-shot
// event: its result is a NameInfoResult, its error a *DNSError. On both
// drivers it is Go's resolver for the host and the services file
// (/etc/services) for the service, as glibc's getnameinfo reads it.
// Everything AddrInfo says of storing, cancelling and lifetime holds for
// it too.
type NameInfo struct {
	event.Base
	reqCore
	g    *goLookup // the pure-Go driver's lookup; nil on libuv
	ctx  lookupContext
	addr netip.AddrPort
}

// NewNameInfo starts looking up the host and service names of addr on r.
// An invalid address, or a zone naming no interface, is refused with an
// error matching syscall.EINVAL.
func NewNameInfo(r *reactor.Reactor, addr netip.AddrPort, hints NameInfoHints) (*NameInfo, error) {
	ip := addr.Addr()
	if !ip.IsValid() {
		return nil, fmt.Errorf("uv: NewNameInfo(%v): invalid address: %w", addr, syscall.EINVAL)
	}
	if z := ip.Zone(); z != "" && strings.Trim(z, "0123456789") != "" {
		if _, err := net.InterfaceByName(z); err != nil {
			return nil, fmt.Errorf("uv: NewNameInfo(%v): zone: %w", addr, errors.Join(err, syscall.EINVAL))
		}
	}
	n := &NameInfo{addr: addr}
	lookup := endedLookup("uv_getnameinfo", addr.String(), hints.Context)
	if lookup == nil {
		q := nameQuery{addr: addr, hints: hints, rs: resolverOf(hints.Resolver)}
		lookup = q.lookup
	}
	if err := submitGo(r, &n.Base, &n.reqCore, &n.g, n, lookup); err != nil {
		return nil, err
	}
	n.ctx.watch(r, &n.reqCore, hints.Context, "uv_getnameinfo", addr.String())
	return n, nil
}

// Await waits for the answer (or replays it once it is in). When ctx ends
// first it returns no answer and ctx's error (the lookup goes on). It must
// not be called on the loop goroutine (event.ErrOnLoop): subscribe there
// instead.
func (n *NameInfo) Await(ctx context.Context) (NameInfoResult, error) {
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
