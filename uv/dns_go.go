package uv

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// The lookups, on both drivers. An AddrInfo or NameInfo is a Go-owned
// event whose lookup runs on Go's resolver (package net) in a goroutine
// of its own, with a context its Close cancels; the answer is queued on
// the loop (kind.Host.Queue: never run in the resolving goroutine), which
// completes the event on a turn, as libuv's callback does inside uv_run,
// never in a Call on a loop nobody runs. A goroutine rather than a
// bounded pool: Go's resolver waits in the netpoller, not on a thread, and
// bounds its own cgo lookups (getaddrinfo on threads of its own, when
// GODEBUG=netdns or the system's configuration asks for the C library);
// libuv's pool of four threads is left to file requests, which a
// nameserver that never answers would starve.
//
// From submission until it completes or closes, a lookup counts as active
// (Run goes on, no deadlock is reported) and in Stats().Handles under its
// kind, as a libuv request in the reactor's table does; the reactor's
// Close closes it (architecture §2, rule 7), which cancels the resolver's
// context and returns without waiting for the resolver: Go's returns at
// once on a cancelled context (its cgo lookup leaves the thread to finish
// alone), and one that does not (a Dial of its own that ignores the
// context) holds only its goroutine, whose answer the closed reactor
// refuses.
//
// What getaddrinfo and getnameinfo do that Go's resolver does not, this
// file does itself, so that both drivers answer alike: literal addresses
// (inet_aton's forms too, "127.1"), interface names as IPv6 zones, the
// loopback or wildcard answer for an empty host, the checks of family and
// numeric hints, and port-to-service names from the services file. Go's
// errors map to the closest EAI_* code (resolverCode).

// resolver is what the lookups ask of Go's resolver (*net.Resolver);
// tests put a fake in its place.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	LookupPort(ctx context.Context, network, service string) (int, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// goResolver is the resolver new lookups use when their hints name none:
// package net's default, so GODEBUG=netdns chooses between its pure-Go DNS
// client and the C library's.
var goResolver resolver = net.DefaultResolver

// resolverOf is the resolver a lookup whose hints name rs asks.
func resolverOf(rs *net.Resolver) resolver {
	if rs == nil {
		return goResolver
	}
	return rs
}

// goLookup is the pure-Go driver's half of a lookup's event (the reqCore
// of an AddrInfo or NameInfo). Its fields are touched on the loop, but
// stop, which is safe anywhere.
type goLookup struct {
	c      *reqCore
	stop   context.CancelFunc // cancels the resolver's context
	closer reactorCloser
	live   bool // counted as active and as a handle: in flight, open
}

type goLookupOps goLookup

// submitGo starts ev's lookup on r: it makes c the event's Go-owned core,
// registers it with r's Close, counts it, and runs lookup in a goroutine
// whose answer completes the event on the loop.
func submitGo[E any, P interface {
	*E
	entryKind
}](r *reactor.Reactor, b *event.Base, c *reqCore, gp **goLookup, ev P, lookup func(context.Context) (any, error)) error {
	g := &goLookup{c: c}
	var err error
	if x := r.Call(func() {
		if err = onReactorClose(&g.closer, r, ev); err != nil {
			return
		}
		host := kind.HostOf(r.Owner())
		c.entry = entry{r: r, host: host, ev: ev}
		c.b = b
		eventkind.Init(b, (*goLookupOps)(g), false, event.GoOwned)
		*gp = g
		g.live = true
		eventkind.ActiveDelta(r.Owner(), 1)
		host.CountHandle(ev.kindName(), 1)
		var ctx context.Context
		ctx, g.stop = context.WithCancel(context.Background())
		go func() {
			res, err := lookup(ctx)
			// Refused once the reactor is closed: its Close closed the
			// lookup, whose answer nobody may hear.
			host.Queue(func() { g.complete(res, err) })
		}()
	}); x != nil {
		return x
	}
	return err
}

// complete delivers the answer, on the loop, unless the event closed
// first (its subscribers heard event.ErrClosed then).
func (g *goLookup) complete(res any, err error) {
	if !g.live {
		return
	}
	g.release()
	c := g.c
	c.res, c.err, c.over = res, err, true
	eventkind.Complete(c.b, res, err)
}

// release ends the lookup's claims, once: its context, its registration
// with the reactor's Close, its counts.
func (g *goLookup) release() {
	if !g.live {
		return
	}
	g.live = false
	stopWatching(g.c.ev)
	g.stop()
	g.closer.forget()
	eventkind.ActiveDelta(g.c.r.Owner(), -1)
	g.c.host.CountHandle(g.c.ev.kindName(), -1)
}

func (o *goLookupOps) Owner() event.Owner         { return o.c.r.Owner() }
func (o *goLookupOps) Event() event.Event         { return o.c.ev }
func (o *goLookupOps) Arm() error                 { return nil }
func (o *goLookupOps) Disarm()                    {}
func (o *goLookupOps) Describe() string           { return o.c.ev.describe() }
func (o *goLookupOps) Stored() (any, error, bool) { return o.c.res, o.c.err, o.c.over }

// Free runs when the event closed: a lookup in flight has its context
// cancelled; its goroutine's answer, when it comes, is dropped.
func (o *goLookupOps) Free(bool) { (*goLookup)(o).release() }

// resolverCode maps an error of Go's resolver to the closest UV_EAI_*
// code: not found (a *net.DNSError's IsNotFound, or a *net.AddrError such
// as "no suitable address") is EAI_NONAME; a timeout or a temporary
// failure (IsTimeout, IsTemporary, an expired context) EAI_AGAIN; a
// cancelled context EAI_CANCELED; anything else EAI_FAIL.
func resolverCode(err error) int {
	var de *net.DNSError
	var ae *net.AddrError
	switch {
	case errors.Is(err, context.Canceled):
		return uvcgo.EAICanceled
	case errors.Is(err, context.DeadlineExceeded):
		return uvcgo.EAIAgain
	case errors.As(err, &de) && de.IsNotFound:
		return uvcgo.EAINoName
	case errors.As(err, &de) && (de.IsTimeout || de.IsTemporary):
		return uvcgo.EAIAgain
	case errors.As(err, &ae):
		return uvcgo.EAINoName
	}
	return uvcgo.EAIFail
}

// addrQuery is an AddrInfo's question, as the resolving goroutine sees it.
type addrQuery struct {
	name             string // for the DNSError
	host, service    string
	family, sockType int
	hints            AddrInfoHints
	rs               resolver
}

func (q addrQuery) lookup(ctx context.Context) (any, error) {
	port, code, err := q.port(ctx, q.rs)
	var ips []netip.Addr
	if code == 0 {
		ips, code, err = q.addrs(ctx, q.rs)
	}
	if code != 0 {
		return nil, &DNSError{Op: "uv_getaddrinfo", Name: q.name, Code: exhaustedCode(code), Err: err}
	}
	out := make([]netip.AddrPort, len(ips))
	for i, ip := range ips {
		out[i] = netip.AddrPortFrom(ip, port)
	}
	return out, nil
}

// port resolves the service (checked first, as glibc does): a number, or
// a name of the socket type's protocol.
func (q addrQuery) port(ctx context.Context, rs resolver) (uint16, int, error) {
	switch {
	case q.service == "":
		return 0, 0, nil
	case strings.Trim(q.service, "0123456789") == "":
		p, _ := strconv.ParseUint(q.service, 10, 16) // in range: NewAddrInfo checked
		return uint16(p), 0, nil
	case q.hints.NumericService:
		return 0, uvcgo.EAINoName, nil
	}
	proto := "tcp"
	if q.sockType == uvcgo.SockDgram {
		proto = "udp"
	}
	p, err := rs.LookupPort(ctx, proto, q.service)
	if err != nil {
		if code := resolverCode(err); code != uvcgo.EAINoName && code != uvcgo.EAIFail {
			return 0, code, err
		}
		return 0, uvcgo.EAIService, err
	}
	return uint16(p), 0, nil
}

// addrs resolves the host: none (loopback or wildcard), a literal, or a
// name for Go's resolver; only addresses of the family asked for.
func (q addrQuery) addrs(ctx context.Context, rs resolver) ([]netip.Addr, int, error) {
	if q.host == "" {
		return q.noHost(), 0, nil
	}
	if ip, ok := parseLiteral(q.host); ok {
		if z := ip.Zone(); z != "" && strings.Trim(z, "0123456789") != "" {
			ifi, err := net.InterfaceByName(z)
			if err != nil {
				return nil, uvcgo.EAINoName, err
			}
			ip = ip.WithZone(strconv.Itoa(ifi.Index))
		}
		if q.family == uvcgo.AFInet && ip.Is4In6() {
			ip = ip.Unmap() // as glibc does for AF_INET
		}
		if !q.wants(ip) {
			return nil, uvcgo.EAIAddrFamily, nil
		}
		return []netip.Addr{ip}, 0, nil
	}
	if q.hints.NumericHost {
		return nil, uvcgo.EAINoName, nil
	}
	network := map[int]string{uvcgo.AFInet: "ip4", uvcgo.AFInet6: "ip6"}[q.family]
	if network == "" {
		network = "ip"
	}
	found, err := rs.LookupNetIP(ctx, network, q.host)
	if err != nil {
		return nil, resolverCode(err), err
	}
	// Go gives IPv4 addresses as IPv4-mapped IPv6 ones at times: unmap
	// them, then keep each address of the family once, in order.
	ips := make([]netip.Addr, 0, len(found))
	for _, ip := range found {
		if ip = ip.Unmap(); q.wants(ip) && !slices.Contains(ips, ip) {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, uvcgo.EAINoName, nil
	}
	return ips, 0, nil
}

// wants reports whether ip is of the family asked for.
func (q addrQuery) wants(ip netip.Addr) bool {
	switch q.family {
	case uvcgo.AFInet:
		return ip.Is4()
	case uvcgo.AFInet6:
		return !ip.Is4()
	}
	return true
}

// noHost is getaddrinfo's answer for no host: the loopback addresses
// (IPv6 first), or with Passive the wildcard ones (IPv4 first), as glibc
// orders them.
func (q addrQuery) noHost() []netip.Addr {
	v4, v6 := netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()
	both := []netip.Addr{v6, v4}
	if q.hints.Passive {
		v4, v6 = netip.IPv4Unspecified(), netip.IPv6Unspecified()
		both = []netip.Addr{v4, v6}
	}
	switch q.family {
	case uvcgo.AFInet:
		return []netip.Addr{v4}
	case uvcgo.AFInet6:
		return []netip.Addr{v6}
	}
	return both
}

// parseLiteral parses a literal address: IPv4 dotted, IPv6 (with a zone),
// or one of inet_aton's older IPv4 forms, which getaddrinfo accepts too:
// one to four parts, decimal, octal (a leading 0) or hex (0x), the last
// filling the remaining bytes ("127.1", "0x7f000001").
func parseLiteral(s string) (netip.Addr, bool) {
	if !strings.Contains(s, ":") && (s == "" || s[0] < '0' || s[0] > '9') {
		return netip.Addr{}, false // a name: IPv6 has colons, IPv4 begins with a digit
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip, true
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var a uint32
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		last := i == len(parts)-1
		if err != nil || !last && v > 255 || last && v >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		if last {
			a |= uint32(v)
		} else {
			a |= uint32(v) << (24 - 8*i)
		}
	}
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), true
}

// nameQuery is a NameInfo's question, as the resolving goroutine sees it.
type nameQuery struct {
	addr  netip.AddrPort
	hints NameInfoHints
	rs    resolver
}

func (q nameQuery) lookup(ctx context.Context) (any, error) {
	host, code, err := q.host(ctx, q.rs)
	if code != 0 {
		return nil, &DNSError{Op: "uv_getnameinfo", Name: q.addr.String(), Code: exhaustedCode(code), Err: err}
	}
	return NameInfoResult{Host: host, Service: q.service()}, nil
}

// host names the address as getnameinfo does: its first name, or, when it
// has none (or the lookup failed for good), its text unless NameRequired;
// a temporary failure is EAI_AGAIN.
func (q nameQuery) host(ctx context.Context, rs resolver) (string, int, error) {
	if q.hints.NumericHost {
		return q.numeric(), 0, nil
	}
	names, err := rs.LookupAddr(ctx, q.addr.Addr().String())
	if err == nil && len(names) > 0 {
		return q.shorten(strings.TrimSuffix(names[0], ".")), 0, nil
	}
	if code := resolverCode(err); err != nil && (code == uvcgo.EAIAgain || code == uvcgo.EAICanceled) {
		return "", code, err
	}
	if q.hints.NameRequired {
		return "", uvcgo.EAINoName, err
	}
	return q.numeric(), 0, nil
}

// numeric is the address as text; an IPv6 zone is the interface's name
// where there is one, as glibc writes it.
func (q nameQuery) numeric() string {
	ip := q.addr.Addr()
	z := ip.Zone()
	if z == "" {
		return ip.String()
	}
	if i, err := strconv.Atoi(z); err == nil {
		if ifi, err := net.InterfaceByIndex(i); err == nil {
			z = ifi.Name
		}
	}
	return ip.WithZone("").String() + "%" + z
}

// shorten applies NoFQDN: a name in the local domain (the host name's,
// after its first dot) loses its domain.
func (q nameQuery) shorten(name string) string {
	dot := strings.IndexByte(name, '.')
	if !q.hints.NoFQDN || dot < 0 {
		return name
	}
	if d := localDomain(); d != "" && strings.EqualFold(name[dot+1:], d) {
		return name[:dot]
	}
	return name
}

// localDomain is the domain of this machine's host name, or "".
var localDomain = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	if _, d, ok := strings.Cut(h, "."); ok {
		return strings.TrimSuffix(d, ".")
	}
	return ""
})

// service names the port as getnameinfo does: the first name the services
// file gives it for TCP (UDP with Datagram), else the number.
func (q nameQuery) service() string {
	port := int(q.addr.Port())
	if !q.hints.NumericService {
		proto := "tcp"
		if q.hints.Datagram {
			proto = "udp"
		}
		if name, ok := services()[strconv.Itoa(port)+"/"+proto]; ok {
			return name
		}
	}
	return strconv.Itoa(port)
}

// servicesFile is where port names come from (glibc's getservbyport
// reads it through NSS's "files" source).
const servicesFile = "/etc/services"

// services maps "port/proto" to the first name the services file gives
// it; empty when the file cannot be read (every service is then numeric).
// A file read is kept; a failed read is tried again next time (a lookup
// made while the process had no descriptor left must not make every
// later one numeric).
func services() map[string]string {
	servicesMu.Lock()
	defer servicesMu.Unlock()
	if servicesRead != nil {
		return servicesRead
	}
	m := map[string]string{}
	f, err := os.Open(servicesFile)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if _, ok := m[fields[1]]; !ok {
			m[fields[1]] = fields[0]
		}
	}
	if sc.Err() == nil {
		servicesRead = m
	}
	return m
}

var (
	servicesMu   sync.Mutex
	servicesRead map[string]string // the services file, once read
)
