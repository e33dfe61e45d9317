package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A lookup runs off the loop while the reactor serves (on libuv's thread
// pool, or on the pure-Go driver in a goroutine over Go's resolver); Wait
// blocks a goroutine until the answer is in. Errors match the EAI_* values
// with errors.Is, and read the same on both drivers.
func ExampleNewAddrInfo() {
	r, ctx, done := exampleServing()
	defer done()

	a, err := uv.NewAddrInfo(r, "127.0.0.1", "http", uv.AddrInfoHints{Network: "tcp4"})
	if err != nil {
		fmt.Println(err)
		return
	}
	addrs, err := a.Await(ctx)
	fmt.Println(addrs, err)
	fmt.Println(a.Info())

	b, _ := uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{NumericHost: true})
	_, err = b.Await(ctx)
	fmt.Println(errors.Is(err, uv.ErrNoName), err)

	// Output:
	// [127.0.0.1:80] <nil>
	// AddrInfo(host="127.0.0.1", service="http", network=tcp4, addrs=1)
	// true uv_getaddrinfo "localhost": EAI_NONAME (unknown node or service)
}

// Each lookup bounded by a context of its own, as net.Resolver's lookups
// are: one its context ends first fails at once with a *uv.DNSError that
// matches the context's error (context.DeadlineExceeded, with IsTimeout
// set), and so does one whose context was over already.
func ExampleAddrInfoHints_context() {
	r, ctx, done := exampleServing()
	defer done()

	lookupCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	a, _ := uv.NewAddrInfo(r, "127.0.0.1", "", uv.AddrInfoHints{Context: lookupCtx})
	addrs, err := a.Await(ctx)
	fmt.Println(addrs, err)

	cancel()
	b, _ := uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{Context: lookupCtx})
	_, err = b.Await(ctx)
	fmt.Println(errors.Is(err, context.Canceled), err)

	// Output:
	// [127.0.0.1:0] <nil>
	// true uv_getaddrinfo "localhost": EAI_CANCELED (request canceled): context canceled
}

// The host and service names of an address and port.
func ExampleNewNameInfo() {
	r, ctx, done := exampleServing()
	defer done()

	n, err := uv.NewNameInfo(r, netip.MustParseAddrPort("127.0.0.1:443"), uv.NameInfoHints{NumericHost: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := n.Await(ctx)
	fmt.Printf("%+v %v\n", res, err)

	// Output:
	// {Host:127.0.0.1 Service:https} <nil>
}

// On the pure-Go driver (reactor.DriverGo, or any build without cgo) the
// same lookups answer alike; a failure also keeps Go's resolver's error.
func ExampleNewAddrInfo_pureGo() {
	r, err := reactor.New(reactor.Options{Driver: reactor.DriverGo})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go r.Serve(ctx)

	a, _ := uv.NewAddrInfo(r, "", "8080", uv.AddrInfoHints{Passive: true})
	addrs, err := a.Await(ctx)
	fmt.Println(addrs, err)

	// An .onion name is never looked up (RFC 7686): Go's resolver finds no
	// address for it.
	b, _ := uv.NewAddrInfo(r, "nowhere.onion", "", uv.AddrInfoHints{})
	_, err = b.Await(ctx)
	var dnsErr *uv.DNSError
	var goErr *net.AddrError
	fmt.Println(errors.Is(err, uv.ErrNoName), errors.As(err, &dnsErr) && errors.As(dnsErr.Err, &goErr))

	// A name no host can have is refused at once, as on the libuv driver.
	_, err = uv.NewAddrInfo(r, "bad..name", "", uv.AddrInfoHints{})
	fmt.Println(err)

	// Output:
	// [0.0.0.0:8080 [::]:8080] <nil>
	// true true
	// uv: NewAddrInfo("bad..name", "", "ip"): an empty label (a host name's labels are separated by one dot): invalid argument
}

// exampleServing makes a reactor served by a goroutine, and a context
// bounding the example's waits; done closes the reactor.
func exampleServing() (*reactor.Reactor, context.Context, func()) {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go r.Serve(ctx)
	return r, ctx, func() { cancel(); r.Close() }
}
