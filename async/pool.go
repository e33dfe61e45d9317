package async

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
)

// ErrPoolClosed: an acquire from a closed pool.
var ErrPoolClosed = errors.New("async: pool closed")

// ErrNotAcquired: Release or Discard of a value the pool has not lent (never
// acquired from it, or released or discarded already). It matches
// syscall.EINVAL.
var ErrNotAcquired = fmt.Errorf("async: value not acquired from this pool: %w", syscall.EINVAL)

// PoolOptions configure a Pool.
type PoolOptions[T any] struct {
	// New makes a resource. It runs in its own goroutine (it may block: a
	// dial, a login) with a context that ends when the pool closes.
	// Required.
	//
	// When New fails, the first waiting acquirer gets its error and the
	// pool starts making a resource for the others (within Max), as it
	// would for a new acquirer: every failure fails one acquirer, so a
	// dial that keeps failing fails them all in turn, and one that
	// recovers serves those still waiting.
	New func(ctx context.Context) (T, error)
	// Destroy, if set, is called on the loop for each resource leaving the
	// pool: discarded, found unhealthy, idle when the pool closes or is
	// dropped without Close, or made by New once nobody waits for it (the
	// reactor's Close ended the acquire). Once the reactor's Close has
	// begun, it is called from a goroutine of its own when that Close is
	// over. It must not block, nor hold the pool: a pool it reaches is
	// never dropped.
	Destroy func(T)
	// Max is the most resources the pool holds at once, in use or idle
	// (at least 1).
	Max int
	// Healthy, if set, is asked every CheckEvery about each idle resource,
	// on the loop (it must not block); an unhealthy one is destroyed.
	Healthy func(T) bool
	// CheckEvery is the period of those checks; it must be positive when
	// Healthy is set.
	CheckEvery time.Duration
}

// A Pool is a pool of resources of a reactor: Acquire is an event (an Op)
// that completes with a resource — an idle one, a new one while fewer than
// Max exist, or the next one released — and Release gives it back. Waiting
// acquirers are served in order. The health check runs on a hidden
// periodic timer: it neither keeps Run going nor hides a deadlock (a
// coroutine waiting to acquire what nobody will release is reported), nor
// keeps a pool dropped without Close: its timer goes with it.
// Every method is safe from any goroutine.
type Pool[T any] struct {
	r      *reactor.Reactor
	opts   PoolOptions[T]
	ctx    context.Context
	cancel context.CancelFunc
	check  *reactor.Timer

	// Loop-owned.
	idle     *poolIdle[T] // shared with the cleanup of a pool dropped without Close
	size     int          // resources in existence or being made
	creating int
	waiters  line[T]
	closed   bool
	// What is lent: a count, and by value where a value can be a map key
	// (lentBy), so that Release and Discard refuse what the pool never
	// gave out; values that cannot be keys are checked by count alone.
	lent   int
	lentBy map[any]int

	afterClose sync.Mutex // serializes the pool's methods once the reactor's Close is over (call)
}

// PoolStats are a pool's counts.
type PoolStats struct {
	Size    int // resources in existence or being made
	Idle    int // of those, idle in the pool
	Waiting int // acquirers waiting
}

// NewPool returns a pool of r. It refuses options without New or with Max
// below 1, and a Healthy check without a positive CheckEvery; once r's
// Close has begun, it refuses with reactor.ErrReactorClosed.
func NewPool[T any](r *reactor.Reactor, opts PoolOptions[T]) (*Pool[T], error) {
	switch {
	case r == nil || opts.New == nil || opts.Max < 1:
		return nil, fmt.Errorf("async: NewPool needs a reactor, New and Max ≥ 1: %w", syscall.EINVAL)
	case opts.Healthy != nil && opts.CheckEvery <= 0:
		return nil, fmt.Errorf("async: NewPool: Healthy needs a positive CheckEvery: %w", syscall.EINVAL)
	}
	if err := closing(r); err != nil {
		return nil, fmt.Errorf("async: NewPool: %w", err)
	}
	p := &Pool[T]{r: r, opts: opts, idle: &poolIdle[T]{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if opts.Destroy != nil {
		runtime.AddCleanup(p, poolDrop[T].dropped, poolDrop[T]{p.idle, r, opts.Destroy})
	}
	if opts.Healthy != nil {
		if err := p.startCheck(); err != nil {
			p.cancel()
			return nil, err
		}
	}
	return p, nil
}

// poolIdle holds a pool's idle resources, loop-owned: apart from the pool
// so that the cleanup of a pool dropped without Close reaches them.
type poolIdle[T any] struct{ vs []T }

// poolDrop is what that cleanup needs, none of it the pool.
type poolDrop[T any] struct {
	idle    *poolIdle[T]
	r       *reactor.Reactor
	destroy func(T)
}

// dropped passes the idle resources of a pool dropped without Close to
// Destroy: on the loop, or, once the reactor refuses work (its Close has
// begun), from a goroutine of its own when that Close is over. Not at once:
// the Close may still be running callbacks on the loop, which Destroy,
// promised the loop, may share state with; and not here, where the
// runtime's cleanups run: the Close may wait for children it terminates.
func (d poolDrop[T]) dropped() {
	destroy := func() {
		vs := d.idle.vs
		d.idle.vs = nil
		for _, v := range vs {
			d.destroy(v)
		}
	}
	afterLoop(d.r, destroy)
}

// startCheck starts the hidden health-check timer. The timer reaches the
// pool weakly, and a cleanup closes it when the pool is dropped without
// Close: a started timer is the reactor's, and would otherwise keep the
// pool, and the loop's turns every CheckEvery, forever.
func (p *Pool[T]) startCheck() error {
	t, err := p.r.NewTimer(p.opts.CheckEvery, p.opts.CheckEvery)
	if err != nil {
		return err
	}
	w := weak.Make(p)
	err = t.SetHidden(true)
	if err == nil {
		_, err = event.Subscribe(t, func(ev event.Event, res any, err error) {
			if p := w.Value(); p != nil {
				p.healthCheck(ev, res, err)
			}
		})
	}
	if err == nil {
		err = t.Start()
	}
	if err != nil {
		t.Close()
		return err
	}
	p.check = t
	r := p.r
	runtime.AddCleanup(p, func(t *reactor.Timer) {
		// Not Close itself: a cleanup must not wait for a loop. A
		// closed reactor has closed the timer already.
		r.Post(func() { t.Close() })
	}, t)
	return nil
}

// Acquire returns the event of acquiring a resource (see Op): it completes
// with the resource, or with the error of making one, or ErrPoolClosed.
// Nothing is taken until it is started (event.Await, or Start).
func (p *Pool[T]) Acquire() *Op[T] {
	if !p.usable() {
		return &Op[T]{} // refuses everything with event.ErrNilEvent
	}
	var zero T
	return newOp[T](p.r, (*poolAcquire[T])(p), zero)
}

// Release gives v back: to the first waiting acquirer, else to the idle
// set. On a closed pool v is destroyed. A value the pool has not lent is
// refused with ErrNotAcquired, and nothing changes.
func (p *Pool[T]) Release(v T) error {
	if !p.usable() {
		return event.ErrNilEvent
	}
	var err error
	if e := p.call(func() {
		if err = p.takeBack(v); err != nil {
			return
		}
		if p.closed {
			p.destroy(v)
			return
		}
		p.put(v)
	}); e != nil {
		return e
	}
	return err
}

// Discard takes v out of the pool for good (it is broken): it is destroyed
// and its place may be taken by a new resource. A value the pool has not
// lent is refused with ErrNotAcquired, and nothing changes.
func (p *Pool[T]) Discard(v T) error {
	if !p.usable() {
		return event.ErrNilEvent
	}
	var err error
	if e := p.call(func() {
		if err = p.takeBack(v); err != nil {
			return
		}
		p.destroy(v)
		p.size--
		p.grow()
	}); e != nil {
		return e
	}
	return err
}

// lend hands v to op, recording it as lent; with the loop held.
func (p *Pool[T]) lend(op *Op[T], v T) {
	p.lent++
	if k, ok := poolKey(v); ok {
		if p.lentBy == nil {
			p.lentBy = map[any]int{}
		}
		p.lentBy[k]++
	}
	op.complete(v, nil)
}

// takeBack records that v, lent, comes back; it refuses a value not lent.
// With the loop held.
func (p *Pool[T]) takeBack(v T) error {
	k, keyed := poolKey(v)
	if p.lent == 0 || keyed && p.lentBy[k] == 0 {
		return ErrNotAcquired
	}
	p.lent--
	if keyed {
		if p.lentBy[k]--; p.lentBy[k] == 0 {
			delete(p.lentBy, k)
		}
	}
	return nil
}

// poolKey returns v as a map key, if its dynamic value can be one.
func poolKey[T any](v T) (any, bool) {
	k := any(v)
	if k == nil {
		return nil, true
	}
	return k, reflect.ValueOf(k).Comparable()
}

// usable reports whether p is a pool NewPool made.
func (p *Pool[T]) usable() bool { return p != nil && p.r != nil && p.opts.New != nil }

// Close closes the pool: idle resources are destroyed, waiting acquirers
// fail with ErrPoolClosed, the health check stops, and resources released
// later are destroyed. Closing twice does nothing. Once the reactor's
// Close has begun, Close, Release and Discard wait for its end, then act
// on the calling goroutine as on a closed pool: idle and given-back
// resources are destroyed and nil is returned, so that a pool outliving
// its reactor still lets its resources go.
func (p *Pool[T]) Close() error {
	if !p.usable() {
		return event.ErrNilEvent
	}
	return p.call(p.shut)
}

// call runs fn with the loop held. Once the reactor refuses work (its
// Close has begun), it waits for the end of that Close, after which
// nothing on the loop touches the pool again, and runs fn here on the
// pool closed, serialized by afterClose.
func (p *Pool[T]) call(fn func()) error {
	err := p.r.Call(fn)
	if !errors.Is(err, reactor.ErrReactorClosed) {
		return err
	}
	p.r.Close() // a Close after the first waits for its end
	p.afterClose.Lock()
	defer p.afterClose.Unlock()
	p.shut()
	fn()
	return nil
}

// shut is Close's work, with the loop held (or, once the reactor's Close
// is over, afterClose: see call).
func (p *Pool[T]) shut() {
	if p.closed {
		return
	}
	p.closed = true
	p.cancel()
	if p.check != nil {
		p.check.Close()
	}
	for _, v := range p.idle.vs {
		p.destroy(v)
		p.size--
	}
	p.idle.vs = nil
	var zero T
	for op := p.waiters.pop(); op != nil; op = p.waiters.pop() {
		op.complete(zero, ErrPoolClosed)
	}
}

// Stats returns the pool's counts.
func (p *Pool[T]) Stats() PoolStats {
	var s PoolStats
	if !p.usable() {
		return s
	}
	p.r.Call(func() { s = PoolStats{Size: p.size, Idle: len(p.idle.vs), Waiting: len(p.waiters)} })
	return s
}

// put hands v to the first waiter or keeps it idle; with the loop held.
func (p *Pool[T]) put(v T) {
	if op := p.waiters.pop(); op != nil {
		p.lend(op, v)
		return
	}
	p.idle.vs = append(p.idle.vs, v)
}

func (p *Pool[T]) destroy(v T) {
	if p.opts.Destroy != nil {
		p.opts.Destroy(v)
	}
}

// grow starts making resources for the waiters no resource on its way will
// serve, within Max.
func (p *Pool[T]) grow() {
	for !p.closed && p.size < p.opts.Max && len(p.waiters) > p.creating {
		p.size++
		p.creating++
		m := &making[T]{}
		c, err := reactor.Go(p.ctx, p.r, m.maker(p.r, p.opts.New, p.opts.Destroy))
		if err == nil {
			_, err = event.Subscribe(c, func(_ event.Event, res any, err error) { p.made(m, res, err) })
		}
		if err != nil {
			m.abandon(p)
			p.failed(err) // one waiter fewer: the loop ends
		}
	}
}

// made receives a new resource, or the error of making one, on the loop.
// A failure fails the first waiter; the others, whose resource is no
// longer on its way, get a new attempt.
func (p *Pool[T]) made(m *making[T], res any, err error) {
	if err != nil {
		m.abandon(p)
		p.failed(err)
		p.grow()
		return
	}
	p.creating--
	v, _ := res.(T)
	if p.closed {
		p.destroy(v)
		p.size--
		return
	}
	p.put(v)
}

// making is one resource on its way. Its maker (New's goroutine) and the
// pool settle once who has the resource, should the pool stop waiting for
// it first (the reactor's Close closes the coroutine's event, which then
// tells made an error, not the value): a resource New makes all the same
// is passed to Destroy, not lost.
type making[T any] struct {
	state atomic.Int32 // makingPending, then makingMade (v is set) or makingAbandoned
	v     T
}

const (
	makingPending = iota
	makingMade
	makingAbandoned
)

// maker is the coroutine that runs New for m. It reaches neither the
// pool nor its loop-owned state.
func (m *making[T]) maker(r *reactor.Reactor, newFn func(context.Context) (T, error), destroy func(T)) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) {
		v, err := newFn(ctx)
		if err != nil {
			return v, err
		}
		m.v = v
		if !m.state.CompareAndSwap(makingPending, makingMade) && destroy != nil {
			afterLoop(r, func() { destroy(v) }) // the pool no longer waits for it
		}
		return v, nil
	}
}

// abandon says the pool no longer waits for m; a resource New made
// already is destroyed. With the loop held.
func (m *making[T]) abandon(p *Pool[T]) {
	if !m.state.CompareAndSwap(makingPending, makingAbandoned) && m.state.CompareAndSwap(makingMade, makingAbandoned) {
		p.destroy(m.v)
	}
}

// afterLoop runs fn on r's loop or, once r refuses work (its Close has
// begun, and may still be running callbacks on the loop), from a goroutine
// of its own when that Close is over.
func afterLoop(r *reactor.Reactor, fn func()) {
	if r.Post(fn) != nil {
		go func() {
			r.Close() // a Close after the first waits for its end
			fn()
		}()
	}
}

// failed accounts for a resource that will not come and gives its error
// to the first waiter.
func (p *Pool[T]) failed(err error) {
	p.creating--
	p.size--
	var zero T
	if op := p.waiters.pop(); op != nil {
		op.complete(zero, err)
	}
}

// healthCheck runs on the hidden timer: unhealthy idle resources go.
func (p *Pool[T]) healthCheck(_ event.Event, _ any, err error) {
	if err != nil || p.closed {
		return
	}
	kept := p.idle.vs[:0]
	for _, v := range p.idle.vs {
		if p.opts.Healthy(v) {
			kept = append(kept, v)
		} else {
			p.destroy(v)
			p.size--
		}
	}
	clear(p.idle.vs[len(kept):])
	p.idle.vs = kept
	p.grow()
}

// poolAcquire is the pool in its acquire role.
type poolAcquire[T any] Pool[T]

func (a *poolAcquire[T]) arm(op *Op[T]) {
	p := (*Pool[T])(a)
	var zero T
	switch {
	case p.closed:
		op.complete(zero, ErrPoolClosed)
	case len(p.idle.vs) > 0:
		v := p.idle.vs[len(p.idle.vs)-1]
		p.idle.vs[len(p.idle.vs)-1] = zero
		p.idle.vs = p.idle.vs[:len(p.idle.vs)-1]
		p.lend(op, v)
	default:
		p.waiters.push(op)
		p.grow()
	}
}

func (a *poolAcquire[T]) disarm(op *Op[T]) { a.waiters.remove(op) }

func (a *poolAcquire[T]) describe(op *Op[T]) string {
	return fmt.Sprintf("Pool.Acquire(size=%d/%d, idle=%d, waiting=%d)", a.size, a.opts.Max, len(a.idle.vs), len(a.waiters))
}
