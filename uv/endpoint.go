package uv

import (
	"context"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// This file is what listening and dialling share over every stream
// transport: an endpoint says how to make the transport's handle, bind it
// and connect it; Dial and DialAsync are here, each driver's dial in
// endpoint_uv.go (dialUV) and io_go.go (dialGo).

// endpoint is an address to listen on or dial, with its socket address on
// the pure-Go driver and its transport's calls on the libuv one (uvCalls,
// endpoint_uv.go).
type endpoint struct {
	transport string   // "tcp" or "unix": the IO's and Listener's transport
	network   string   // the network asked for ("tcp4", ...), which errors name
	addr      net.Addr // the address asked for
	family    int      // the socket's address family
	sa        unix.Sockaddr
	v6only    bool // an IPv6 socket that takes no IPv4 (network "tcp6")
	uvCalls
}

// resolveEndpoint resolves address for network: "tcp", "tcp4", "tcp6"
// (host and port; a host name is looked up on the calling goroutine) or
// "unix" (a socket path).
func resolveEndpoint(network, address string) (endpoint, error) {
	if network == "unix" {
		return unixEndpoint(address)
	}
	return tcpEndpoint(network, address)
}

// DialAsync starts connecting to address over network ("tcp", "tcp4",
// "tcp6", or "unix" for a socket path) and returns a request that
// completes with the connected *IO, or the error (ECONNREFUSED, ENOENT,
// ...). A host name is resolved on the calling goroutine
// (net.ResolveTCPAddr), and only its first address is tried: give an IP
// to keep that off a loop goroutine, or use Dial or a Dialer, which
// resolve within a context and try every address.
// Closing the request before it completes abandons the connect: its
// socket is closed at once, and it no longer keeps Run going.
func DialAsync(r *reactor.Reactor, network, address string) (*event.Future[*IO], error) {
	if err := reactorMade("DialAsync", r); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ep, err := resolveEndpoint(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ep.network = network
	if r == nil {
		return nil, fmt.Errorf("uv: nil reactor: %w", errInvalid)
	}
	c := &IO{}
	f := event.NewFuture[*IO](r.Owner())
	op := &ioOp{fut: futureOf[*IO]{f}, res: func(*ioOp) any { return c }}
	dial := dialUV
	if r.Driver() == reactor.DriverGo {
		dial = dialGo
	}
	if err := dial(r, ep, c, op); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: ep.addr, Err: err}
	}
	// A future closed while its connect is in flight abandons the connect:
	// its socket closes at once (the close is notified on the loop), so
	// that it neither connects later nor keeps Run going.
	e := c.e
	event.Subscribe(f, func(_ event.Event, _ any, err error) {
		if isClosed(err) && e.conn != nil && !e.closed {
			e.base.Close()
		}
	})
	return f, nil
}

// Dial connects to address over network ("tcp", "tcp4", "tcp6", or "unix"
// for a socket path) as a Dialer with only its Reactor set does: a host
// name is resolved within ctx by Go's resolver, and every address it gives
// is tried, IPv6 and IPv4 with a fallback delay as net.Dialer tries them.
// It returns the connection once connected, or ctx's error (every
// attempt's socket is then closed before Dial returns, as net.Dialer's
// is). A ctx that has ended before the call starts no connect: Dial
// returns its error at once, as net.Dialer does.
func Dial(ctx context.Context, r *reactor.Reactor, network, address string) (*IO, error) {
	return (&Dialer{Reactor: r}).DialIO(ctx, network, address)
}

// dialOne connects to one address (a literal, or a path) and awaits the
// connection, or ctx's end, which closes the attempt's socket.
func dialOne(ctx context.Context, r *reactor.Reactor, network, address string) (*IO, error) {
	f, err := DialAsync(r, network, address)
	if err != nil {
		return nil, err
	}
	c, err := awaitOne(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			// The connect is abandoned: closing its future closes its
			// socket now, on the loop; one that completed first gave an
			// IO nobody will have.
			f.Close()
			if c, ok, _ := f.Outcome(); ok && c != nil {
				c.Close()
			}
		}
		// The address dialled, as net.Dialer names it: a literal or a
		// path here, resolved again without a lookup.
		var addr net.Addr
		if ep, rerr := resolveEndpoint(network, address); rerr == nil {
			addr = ep.addr
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: addr, Err: err}
	}
	return c, nil
}
