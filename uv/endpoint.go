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
// (net.ResolveTCPAddr); give an IP to keep that off a loop goroutine.
func DialAsync(r *reactor.Reactor, network, address string) (*event.Future[*IO], error) {
	if err := reactorMade("DialAsync", r); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ep, err := resolveEndpoint(network, address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if r == nil {
		return nil, fmt.Errorf("uv: nil reactor: %w", errInvalid)
	}
	c := &IO{}
	f := event.NewFuture[*IO](r.Owner())
	op := &ioOp{fut: futureOf[*IO]{f}, res: func(*ioOp) any { return c }}
	if r.Driver() == reactor.DriverGo {
		if err := dialGo(r, ep, c, op); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Addr: ep.addr, Err: err}
		}
		return f, nil
	}
	if err := dialUV(r, ep, c, op); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: ep.addr, Err: err}
	}
	return f, nil
}

// Dial connects to address over network (see DialAsync) and returns the
// connection once connected, or ctx's error (the connection attempt is then
// closed). A ctx that has ended before the call starts no connect: Dial
// returns its error at once, as net.Dialer does.
func Dial(ctx context.Context, r *reactor.Reactor, network, address string) (*IO, error) {
	if ctx == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: event.ErrNilContext}
	}
	if err := ctx.Err(); err != nil { // ended already: no connect is started
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	f, err := DialAsync(r, network, address)
	if err != nil {
		return nil, err
	}
	c, err := awaitOne(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			// The connect is abandoned: whenever it completes, its IO is
			// closed.
			closeIO := func(_ event.Event, res any, _ error) {
				if c, ok := res.(*IO); ok {
					c.Close()
				}
			}
			if _, err := event.Subscribe(f, closeIO); err != nil {
				res, _, err := f.Outcome()
				closeIO(nil, res, err)
			}
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return c, nil
}
