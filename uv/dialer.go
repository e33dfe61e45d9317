package uv

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// A Dialer connects to addresses on a reactor with the options of a
// net.Dialer: its DialContext has net.Dialer.DialContext's signature, so it
// plugs in wherever one is taken (http.Transport.DialContext,
// grpc.WithContextDialer). The zero value, with Reactor set, dials as Dial
// does.
//
// A host name is resolved within the dial's context, by Resolver, never on
// the loop and never by libuv's thread pool; a literal address is never
// sent to a resolver. Every address the name gives is tried, as net.Dialer
// tries them: with network "tcp" and addresses of both families, the
// first address's family is tried first and the other begins after
// FallbackDelay unless the first has failed already (Happy Eyeballs, RFC
// 8305); the first connection made wins and the other attempt is closed.
// Within a family, addresses are tried one after another, each given an
// equal share of the time left (at least 2 s), as net.Dialer shares it.
type Dialer struct {
	// Reactor is the reactor the connection is made on (required).
	Reactor *reactor.Reactor
	// Timeout, if positive, bounds the whole dial, resolving included.
	Timeout time.Duration
	// Deadline, if not zero, is when the dial fails; the earlier of it,
	// Timeout and the context's deadline applies.
	Deadline time.Time
	// FallbackDelay is how long the first family is tried alone before the
	// other starts: zero is 300 ms, as net.Dialer's; negative tries every
	// address one after another.
	FallbackDelay time.Duration
	// KeepAlive, if positive, turns TCP keep-alive on with this idle time
	// and interval. Zero or negative leaves KeepAliveConfig in charge:
	// unlike net.Dialer, whose zero turns keep-alive on, a connection
	// has keep-alive off until asked, as every connection of this package
	// and of libuv (docs/io.md).
	KeepAlive time.Duration
	// KeepAliveConfig, when Enable is set (and KeepAlive is not
	// positive), is set on the connection (IO.SetKeepAliveConfig).
	KeepAliveConfig net.KeepAliveConfig
	// Resolver resolves host names; nil is net.DefaultResolver. One with
	// PreferGo and a Dial of its own asks the nameserver the caller
	// chooses.
	Resolver *net.Resolver
}

// The defaults net.Dialer uses too.
const (
	defaultFallbackDelay = 300 * time.Millisecond
	minAttemptTime       = 2 * time.Second
)

// Dial connects to address over network with a background context; see
// DialContext.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to address over network ("tcp", "tcp4", "tcp6" or
// "unix") on d.Reactor and returns the *IO as a net.Conn, or an error (a
// *net.OpError). When ctx ends first, every attempt's socket is closed
// before it returns. See DialIO.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.DialIO(ctx, network, address)
	if err != nil {
		return nil, err // never a nil *IO in a non-nil net.Conn
	}
	return c, nil
}

// DialIO is DialContext returning the *IO itself.
func (d *Dialer) DialIO(ctx context.Context, network, address string) (*IO, error) {
	if ctx == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: event.ErrNilContext}
	}
	if err := reactorMade("Dial", d.Reactor); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ctx, cancel := d.bound(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil { // ended already: nothing is started
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	targets, err := d.resolve(ctx, network, address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	var c *IO
	if len(targets) == 0 { // a path, an empty host: dialled as given
		c, err = dialOne(ctx, d.Reactor, network, address)
	} else {
		c, err = d.dialParallel(ctx, network, targets)
	}
	if err != nil {
		return nil, err
	}
	if err := d.keepAlive(network, c); err != nil {
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Addr: c.RemoteAddr(), Err: err}
	}
	return c, nil
}

// bound is ctx with the earliest of d's Timeout and Deadline applied.
func (d *Dialer) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline := d.Deadline
	if d.Timeout > 0 {
		if t := time.Now().Add(d.Timeout); deadline.IsZero() || t.Before(deadline) {
			deadline = t
		}
	}
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

// resolve returns the addresses to try for a TCP address, in the
// resolver's order and of the network's family: a literal as it is, a
// name through d's resolver within ctx. It returns none for what is
// dialled as given (a "unix" path, a host left empty).
func (d *Dialer) resolve(ctx context.Context, network, address string) ([]netip.AddrPort, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, nil // resolveEndpoint refuses what is not "unix"
	}
	host, service, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return nil, nil
	}
	if err := hostError(host); err != nil {
		return nil, err // refused as NewAddrInfo refuses it, before any resolver
	}
	rs := d.Resolver
	if rs == nil {
		rs = net.DefaultResolver
	}
	port, err := strconv.ParseUint(service, 10, 16)
	if err != nil {
		p, perr := rs.LookupPort(ctx, network, service)
		if perr != nil {
			return nil, perr
		}
		port = uint64(p)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(ip, uint16(port))}, nil
	}
	ipNet := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	ips, err := rs.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, ip := range ips {
		ip = ip.Unmap()
		if network == "tcp4" && !ip.Is4() || network == "tcp6" && ip.Is4() {
			continue
		}
		out = append(out, netip.AddrPortFrom(ip, uint16(port)))
	}
	if len(out) == 0 {
		return nil, &net.AddrError{Err: "no suitable address found", Addr: host}
	}
	return out, nil
}

// dialParallel tries the primaries (the first address's family), and
// after the fallback delay, or at once when they have failed, the
// others; the first connection wins, the other attempt is cancelled (its
// socket closed, or its connection).
func (d *Dialer) dialParallel(ctx context.Context, network string, targets []netip.AddrPort) (*IO, error) {
	var primaries, fallbacks []netip.AddrPort
	for _, t := range targets {
		if t.Addr().Is4() == targets[0].Addr().Is4() || d.FallbackDelay < 0 {
			primaries = append(primaries, t)
		} else {
			fallbacks = append(fallbacks, t)
		}
	}
	if len(fallbacks) == 0 {
		return dialSerial(ctx, d.Reactor, network, primaries)
	}
	type result struct {
		c       *IO
		err     error
		primary bool
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, 2)
	race := func(primary bool, addrs []netip.AddrPort) {
		c, err := dialSerial(ctx, d.Reactor, network, addrs)
		results <- result{c, err, primary}
	}
	go race(true, primaries)
	delay := d.FallbackDelay
	if delay == 0 {
		delay = defaultFallbackDelay
	}
	fallback := time.NewTimer(delay)
	defer fallback.Stop()
	var firstErr error
	started, finished := 1, 0
	for {
		select {
		case <-fallback.C:
			if started == 1 {
				started++
				go race(false, fallbacks)
			}
		case res := <-results:
			finished++
			if res.err == nil {
				cancel()
				if started > finished { // the other attempt: close what it made
					go func() {
						if other := <-results; other.err == nil {
							other.c.Close()
						}
					}()
				}
				return res.c, nil
			}
			if firstErr == nil || res.primary {
				firstErr = res.err
			}
			if started == 1 { // the primaries failed: the fallbacks now
				started++
				fallback.Stop()
				go race(false, fallbacks)
			} else if finished == started {
				return nil, firstErr
			}
		}
	}
}

// dialSerial tries each address in turn until one connects, each given
// an equal share of the time ctx has left (at least minAttemptTime); it
// returns the first error when none does.
func dialSerial(ctx context.Context, r *reactor.Reactor, network string, addrs []netip.AddrPort) (*IO, error) {
	var firstErr error
	for i, a := range addrs {
		if err := ctx.Err(); err != nil {
			if firstErr == nil {
				firstErr = &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(a), Err: err}
			}
			break
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			share := time.Until(deadline) / time.Duration(len(addrs)-i)
			actx, cancel = context.WithTimeout(ctx, max(share, minAttemptTime))
		}
		c, err := dialOne(actx, r, network, a.String())
		cancel()
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// keepAlive applies d's keep-alive options to a new TCP connection.
func (d *Dialer) keepAlive(network string, c *IO) error {
	switch {
	case network == "unix":
		return nil
	case d.KeepAlive > 0:
		return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: d.KeepAlive, Interval: d.KeepAlive, Count: -1})
	case d.KeepAliveConfig.Enable:
		return c.SetKeepAliveConfig(d.KeepAliveConfig)
	}
	return nil
}
