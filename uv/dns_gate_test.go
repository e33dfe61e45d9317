package uv_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// gatedResolver holds every lookup until Fire lets one through to Go's
// resolver (or the lookup's context ends): the conformance rows' lookups
// stay in flight until the table fires them, as a Task's function waits
// behind its gate.
type gatedResolver struct {
	held chan heldLookup
	on   sync.Map // event.Event → struct{}: the table's lookups
}

type heldLookup struct {
	ctx  context.Context
	open chan struct{}
}

func newGatedResolver(t *testing.T) *gatedResolver {
	g := &gatedResolver{held: make(chan heldLookup, 1024)}
	uv.UvtSetResolver(t, g)
	return g
}

// gate returns what notes that a lookup New made on r waits for fire.
func gate[E event.Event](g *gatedResolver, _ *reactor.Reactor) func(E, error) (event.Event, error) {
	return func(ev E, err error) (event.Event, error) {
		if err != nil {
			return nil, err
		}
		g.on.Store(event.Event(ev), struct{}{})
		return ev, nil
	}
}

// fire lets the lookup of the table through, the one held whose context is
// still alive (those of earlier checks were cancelled when they closed).
func (g *gatedResolver) fire(ev event.Event) error { return g.detach(ev)() }

// detach takes ev out of the lookups to let through and returns what lets
// it through (fire), holding no reference to ev.
func (g *gatedResolver) detach(ev event.Event) func() error {
	if _, ok := g.on.LoadAndDelete(ev); !ok {
		return func() error { return nil }
	}
	return g.open
}

// open lets the oldest held lookup whose context is alive through.
func (g *gatedResolver) open() error {
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	for {
		select {
		case h := <-g.held:
			if h.ctx.Err() == nil {
				close(h.open)
				return nil
			}
		case <-ctx.Done():
			return errors.New("no lookup reached the resolver")
		}
	}
}

func (g *gatedResolver) wait(ctx context.Context) error {
	h := heldLookup{ctx, make(chan struct{})}
	g.held <- h
	select {
	case <-h.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

func (g *gatedResolver) LookupPort(ctx context.Context, network, service string) (int, error) {
	if err := g.wait(ctx); err != nil {
		return 0, err
	}
	return net.DefaultResolver.LookupPort(ctx, network, service)
}

func (g *gatedResolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return net.DefaultResolver.LookupAddr(ctx, addr)
}
