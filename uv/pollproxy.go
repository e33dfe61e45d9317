package uv

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// A PollProxy is one subscriber's view of a shared Poll: many proxies over
// one descriptor share the poll's single watch of it, each with its own
// event set, callbacks and Start/Stop. A goroutine that reads and one that
// writes the same socket each hold a proxy.
//
// The rules:
//   - the mask the poll polls for is the union of the started proxies'
//     events, recomputed on every proxy Start and Stop (and when a proxy
//     closes or is collected); the first Start starts the poll, the last
//     Stop stops it;
//   - a readiness reaches only the started proxies whose events it
//     matches, with the triggered events masked by the proxy's own
//     (triggered & events);
//   - a disconnect reaches every started proxy, with its full event set
//     plus Disconnect, so that each tries its operation and sees the end;
//     an error stops them all (polling stopped), then reaches each proxy
//     that was started with its event set and the error (its callback may
//     start it again);
//   - while proxies exist, the poll's own callbacks are not notified, and
//     the poll's own Start adds nothing to the mask: it keeps the poll
//     active (Run goes on) while polling for no event. Start the proxies,
//     not the poll;
//   - on a stream socket a readable report is checked with a non-blocking
//     peek before each delivery: a readiness another reader consumed since
//     the kernel reported it (a proxy notified before in the same pass, or
//     a goroutine reading meanwhile) is dropped.
//
// A PollProxy is a Go-owned event, the same on both drivers: it holds no C
// memory. It keeps its Poll
// reachable, so the poll outlives its proxies; a proxy dropped while
// stopped is collected (and stops counting as existing), one dropped while
// started goes on polling, like a started timer. Closing the poll closes
// its proxies.
type PollProxy struct {
	event.Base
	poll   *Poll // keeps the reference, hence the handle, alive
	e      *pollState
	events PollEvents
}

type pollProxyOps PollProxy

// NewPollProxy creates a proxy for events (a non-empty set of Readable,
// Writable, Disconnect, Prioritized) over p. It is not started. It refuses
// a nil poll or a bad event set (syscall.EINVAL), a zero Poll
// (event.ErrNilEvent) and a closed poll (event.ErrClosed).
func NewPollProxy(p *Poll, events PollEvents) (*PollProxy, error) {
	if p == nil || events == 0 || events&^allPollEvents != 0 {
		return nil, fmt.Errorf("uv: NewPollProxy(events=%v): %w", events, syscall.EINVAL)
	}
	if p.e == nil {
		return nil, fmt.Errorf("uv: NewPollProxy: %w", errZero("Poll"))
	}
	x := &PollProxy{poll: p, e: p.e, events: events}
	eventkind.Init(&x.Base, (*pollProxyOps)(x), true, event.GoOwned)
	var err error
	if e := p.e.drv.reactorOf().Call(func() {
		if p.e.drv.Flags().Has(event.Closed) {
			err = event.ErrClosed
			return
		}
		// Proxies collected meanwhile leave empty pointers: drop them.
		p.e.proxies = slices.DeleteFunc(p.e.proxies, func(w weak.Pointer[PollProxy]) bool { return w.Value() == nil })
		p.e.proxies = append(p.e.proxies, weak.Make(x))
	}); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	// A proxy collected without Close may have been the last: the poll
	// then polls for its own events again.
	runtime.AddCleanup(x, func(e *pollState) { e.drv.reactorOf().Post(func() { e.apply() }) }, p.e)
	return x, nil
}

// Poll returns the poll the proxy shares.
func (x *PollProxy) Poll() *Poll {
	if x == nil {
		return nil
	}
	return x.poll
}

// Events returns the proxy's event set.
func (x *PollProxy) Events() PollEvents {
	if x == nil {
		return 0
	}
	return x.events
}

func (o *pollProxyOps) Owner() event.Owner { return o.e.drv.reactorOf().Owner() }
func (o *pollProxyOps) Event() event.Event { return (*PollProxy)(o) }

func (o *pollProxyOps) Describe() string {
	return fmt.Sprintf("PollProxy(fd=%d, events=%v)", o.e.fd, o.events)
}

// Arm: the first started proxy starts the poll; any other changes its
// mask.
func (o *pollProxyOps) Arm() error {
	e := o.e
	if err := armable(e.drv.reactorOf()); err != nil {
		return err
	}
	if e.drv.Flags().Has(event.Closed) {
		return event.ErrClosed
	}
	e.started = append(e.started, (*PollProxy)(o))
	if err := e.proxyChanged(); err != nil {
		e.started = slices.DeleteFunc(e.started, func(p *PollProxy) bool { return p == (*PollProxy)(o) })
		// The Start of the poll this one may have taken for the proxies
		// (the first started) goes back: otherwise it stays held for
		// nobody, and the user's Stop could never stop the poll.
		e.proxyChanged()
		return err
	}
	return nil
}

// Disarm: the last stopped proxy stops the poll; any other narrows its
// mask.
func (o *pollProxyOps) Disarm() {
	e := o.e
	e.started = slices.DeleteFunc(e.started, func(p *PollProxy) bool { return p == (*PollProxy)(o) })
	e.proxyChanged()
}

// Free forgets the closed proxy: the poll's callbacks are notified again
// once no proxy is left.
func (o *pollProxyOps) Free(bool) {
	o.e.proxies = slices.DeleteFunc(o.e.proxies, func(w weak.Pointer[PollProxy]) bool {
		p := w.Value()
		return p == nil || p == (*PollProxy)(o)
	})
	o.e.apply()
}

// proxyChanged recomputes the mask the poll polls for after a proxy
// started or stopped, starting the poll for the first started proxy and
// stopping it after the last.
func (e *pollState) proxyChanged() error {
	switch {
	case len(e.started) > 0 && !e.proxyHold:
		if err := e.drv.Start(); err != nil {
			return err
		}
		e.proxyHold = true
	case len(e.started) == 0 && e.proxyHold:
		e.proxyHold = false
		e.drv.Stop() // the poll stays armed if its user started it too
	}
	return e.apply()
}

// proxyCount returns how many proxies exist (made, not closed, not
// collected).
func (e *pollState) proxyCount() int {
	n := 0
	for _, w := range e.proxies {
		if w.Value() != nil {
			n++
		}
	}
	return n
}

// proxyMask is the union of the proxies' event sets.
func proxyMask(started []*PollProxy) PollEvents {
	var m PollEvents
	for _, p := range started {
		m |= p.events
	}
	return m
}

// proxyDelivery is what one proxy is told about a poll report.
type proxyDelivery struct {
	Result PollEvents
	Err    error
}

// proxyOutcome decides what a started proxy with event set mask is told
// about a report (triggered, err): ok is false when it is not told.
func proxyOutcome(mask, triggered PollEvents, err error) (d proxyDelivery, ok bool) {
	switch {
	case err != nil:
		return proxyDelivery{mask, err}, true
	case triggered&Disconnect != 0:
		return proxyDelivery{mask | Disconnect, nil}, true
	case triggered&mask != 0:
		return proxyDelivery{triggered & mask, nil}, true
	}
	return proxyDelivery{}, false
}

// notifyProxies delivers a report to the proxies among those given (the
// started ones) it concerns. A callback may start, stop or close proxies
// (or the poll): the pass runs over the proxies given when it began, and
// skips each one closed when its turn comes, or, with startedOnly, no
// longer started (a report that stopped polling stopped them all first).
// On a stream socket, a readiness is checked with a peek before each
// delivery that is only about reading: a reader notified earlier in the
// pass may have taken the data.
func (e *pollState) notifyProxies(among []*PollProxy, startedOnly bool, triggered PollEvents, err error) {
	for _, p := range slices.Clone(among) {
		if startedOnly && eventkind.LoopRefs(p) == 0 || p.Flags().Has(event.Closed) {
			continue
		}
		d, ok := proxyOutcome(p.events, triggered, err)
		if ok && d.Err == nil && d.Result&Readable != 0 && d.Result&Disconnect == 0 && e.stream && e.nothingToRead() {
			d.Result &^= Readable
			ok = d.Result != 0
		}
		if ok {
			eventkind.Notify(&p.Base, d.Result, d.Err)
		}
	}
}
