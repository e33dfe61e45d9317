// Package conform is the conformance table every event kind runs through:
// the rules of the event contract (docs/architecture.md §3) that hold for any kind,
// checked the same way for each. The table itself lists every kind at a
// glance, one row a kind (uv/conform_test.go); a row describes its
// kind:
//
//	func conformTrigger(t *testing.T) conform.Kind {
//		return conform.Kind{
//			Name: "trigger",
//			New:  func(r *reactor.Reactor) (event.Event, error) { return uv.NewTrigger(r) },
//			Fire: func(ev event.Event) error { return ev.(*uv.Trigger).Send() },
//			Info: regexp.MustCompile(`^Trigger\(sent=\d+, fired=\d+\)$`),
//		}
//	}
//
// Every check runs on a reactor of its own and ends by closing it and
// checking that no C handle is left. A row leaves a check out only with a
// reason (Kind.Skip), printed when the check is skipped.
package conform

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/reactor"
)

// Kind describes one event kind for the table.
type Kind struct {
	// Name is the kind's name in Stats().Handles for kinds backed by a C
	// handle ("trigger", "poll", ...); empty for Go-owned kinds.
	Name string
	// New creates an event of the kind on r, not started.
	New func(r *reactor.Reactor) (event.Event, error)
	// Fire makes a started event notify once, from any goroutine. Nil when
	// the kind fires by itself once started (timers, requests).
	Fire func(ev event.Event) error
	// Detach returns what Fire does, holding no reference to ev: what Fire
	// needs of ev (an address, a descriptor, the event behind a reference:
	// event.Deref) is taken now. The check that drops every reference to a
	// started event fires it with this. Needed when Fire is set.
	Detach func(ev event.Event) (fire func() error)
	// FiresWith is the error a firing's notification carries, which the
	// Fires check wants (errors.Is): nil for most kinds; a timeout's
	// firing is its *event.TimeoutError (event.ErrTimeout).
	FiresWith error
	// Info matches the event's Info line.
	Info *regexp.Regexp
	// OneShot: the event fires once per start (a one-shot timer, a
	// request, a process): it closes after it fires, or, with
	// StopsWhenFired, is stopped.
	OneShot bool
	// StopsWhenFired: a one-shot event that is stopped, not closed, when
	// it fires, and can be started again (a one-shot timer, as a fired
	// uv_timer_t).
	StopsWhenFired bool
	// NeedsLibuv: the kind exists on the libuv driver only; on the pure-Go
	// driver its constructor must refuse with reactor.ErrNoLibuv.
	NeedsLibuv bool
	// NoStart: Start does not arm the kind (futures, requests, which run
	// from creation); the start-counting check is skipped for it.
	NoStart bool
	// Skip names checks the kind is left out of (by the check's subtest
	// name, e.g. "ClosesAnotherInCallback"), each with the reason printed
	// when it is skipped: what the kind cannot do in a test, or a rule it
	// does not keep yet.
	Skip map[string]string
}

// safety bounds every wait; reaching it means the kind hangs.
const safety = 30 * time.Second

// Run runs k through the table on each driver, one subtest per driver and
// rule. Without libuv (a build without cgo) the libuv driver's subtests are
// skipped, saying so.
func Run(t *testing.T, k Kind) {
	t.Helper()
	EachDriver(t, func(t *testing.T, d reactor.Driver) {
		if d == reactor.DriverGo && k.NeedsLibuv {
			refusesWithoutLibuv(t, k)
			return
		}
		runOn(t, d, k)
	})
}

// Drivers are the drivers every kind and every cross-driver test run on.
var Drivers = []reactor.Driver{reactor.DriverLibuv, reactor.DriverGo}

// EachDriver runs fn in a subtest per driver (named "libuv", "go"),
// skipping, with the reason printed, a driver this build does not have
// (libuv without cgo). It is the one way the test suites iterate drivers.
func EachDriver(t *testing.T, fn func(t *testing.T, d reactor.Driver)) {
	t.Helper()
	for _, d := range Drivers {
		t.Run(d.String(), func(t *testing.T) {
			if !Available(d) {
				t.Skipf("the %s driver is not in this build (no cgo)", d)
			}
			fn(t, d)
		})
	}
}

// refusesWithoutLibuv: a kind that needs libuv gives a clear error on the
// pure-Go driver, not a crash or a half-made event.
func refusesWithoutLibuv(t *testing.T, k Kind) {
	r := newReactor(t, reactor.DriverGo)
	ev, err := k.New(r)
	if !errors.Is(err, reactor.ErrNoLibuv) || ev != nil && !isNil(ev) {
		t.Fatalf("New on the pure-Go driver = %v, %v; want nil, ErrNoLibuv", ev, err)
	}
}

// isNil reports whether ev is an interface holding a nil pointer.
func isNil(ev event.Event) bool {
	v := reflect.ValueOf(ev)
	return ev == nil || v.Kind() == reflect.Pointer && v.IsNil()
}

func runOn(t *testing.T, d reactor.Driver, k Kind) {
	checks := []struct {
		name    string
		run     func(t *testing.T, r *reactor.Reactor, k Kind)
		skip    bool
		because string // why the check does not apply when skip is set
	}{
		{"StartCounts", startCounts, k.NoStart, "Start does not arm it (Kind.NoStart)"},
		{"Fires", fires, false, ""},
		{"ClosedRefuses", closedRefuses, false, ""},
		{"Info", info, false, ""},
		{"PendingGetsErrClosed", pendingGetsErrClosed, false, ""},
		{"DroppedIsFreed", droppedIsFreed, k.Name == "", "no handle of its own to count in Stats (Kind.Name is empty)"},
		{"StartedIsKept", startedIsKept, false, ""},
		{"ClosingReactorRefuses", closingReactorRefuses, false, ""},
		{"ClosesItselfInCallback", closesItself, false, ""},
		{"ClosesAnotherInCallback", closesAnother, false, ""},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skipf("%s: not applicable to %s: %s", c.name, k.describe(), c.because)
			}
			if why, ok := k.Skip[c.name]; ok {
				t.Skipf("%s: %s: %s", c.name, k.describe(), why)
			}
			r := newReactor(t, d)
			c.run(t, r, k)
		})
	}
}

func (k Kind) describe() string {
	if k.Name != "" {
		return k.Name
	}
	return "a Go-owned kind"
}

// newReactor returns a reactor closed at cleanup, where it must leave
// nothing alive (NewReactor); its reports are the checks' business.
func newReactor(t *testing.T, d reactor.Driver) *reactor.Reactor {
	t.Helper()
	return NewReactor(t, reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
}

func mustNew(t *testing.T, r *reactor.Reactor, k Kind) event.Event {
	t.Helper()
	ev, err := k.New(r)
	if err != nil || ev == nil {
		t.Fatalf("New: %v, %v", ev, err)
	}
	return ev
}

// Start on a started event only counts; the last Stop stops it; Stop when
// stopped does nothing.
func startCounts(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	defer ev.Close()
	if err := ev.Stop(); err != nil {
		t.Fatalf("Stop before Start = %v, want nil", err)
	}
	for i := range 2 {
		if err := ev.Start(); err != nil {
			t.Fatalf("Start #%d: %v", i+1, err)
		}
	}
	if got := eventkind.LoopRefs(ev); got != 2 {
		t.Fatalf("after two Starts LoopRefs = %d, want 2", got)
	}
	ev.Stop()
	if got := event.StateOf(ev); got != event.Active {
		t.Fatalf("after Start, Start, Stop: %v, want active", got)
	}
	ev.Stop()
	if got := event.StateOf(ev); got != event.Stopped {
		t.Fatalf("after the last Stop: %v, want stopped", got)
	}
	if err := ev.Stop(); err != nil || eventkind.LoopRefs(ev) != 0 {
		t.Fatalf("Stop when stopped = %v (refs %d), want a no-op", err, eventkind.LoopRefs(ev))
	}
}

// A started event notifies its subscriber on the loop goroutine.
func fires(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	defer ev.Close()
	got := make(chan error, 1)
	if _, err := event.Subscribe(ev, func(_ event.Event, _ any, err error) {
		if !r.Owner().Owned() {
			err = errors.New("callback off the loop goroutine")
		}
		select { // a kind that fires every turn must not block the loop
		case got <- err:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	stop := serve(t, r)
	defer stop()
	if k.Fire != nil {
		if err := k.Fire(ev); err != nil {
			t.Fatalf("Fire: %v", err)
		}
	}
	select {
	case err := <-got:
		if !errors.Is(err, k.FiresWith) {
			t.Fatalf("notification error: %v, want %v", err, k.FiresWith)
		}
	case <-time.After(safety):
		t.Fatal("a started event did not fire")
	}
	switch {
	case k.StopsWhenFired:
		waitState(t, ev, event.Stopped)
	case k.OneShot:
		waitState(t, ev, event.StateClosed)
	}
}

// A closed event refuses subscription and Start with ErrClosed; closing it
// again does nothing.
func closedRefuses(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	if err := ev.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := ev.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	if err := ev.Start(); !errors.Is(err, event.ErrClosed) && !(k.NoStart && err == nil) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	cb := event.NewCallback(func(event.Event, any, error) {})
	defer cb.Release()
	if err := ev.AddCallback(cb); !errors.Is(err, event.ErrClosed) {
		t.Errorf("AddCallback after Close = %v, want ErrClosed", err)
	}
	if ev.Flags()&event.Closed == 0 {
		t.Errorf("flags %v lack Closed", ev.Flags())
	}
}

func info(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	defer ev.Close()
	if got := ev.Info(); !k.Info.MatchString(got) {
		t.Fatalf("Info = %q, want a match of %s", got, k.Info)
	}
}

// A subscriber waiting on a started event hears ErrClosed when it closes.
func pendingGetsErrClosed(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	var got error
	event.Subscribe(ev, func(_ event.Event, _ any, err error) { got = err })
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got, event.ErrClosed) {
		t.Fatalf("subscriber of a closed event got %v, want ErrClosed", got)
	}
}

// An event reference dropped without Close while stopped is freed: its C
// handle goes after a collection and a loop turn.
func droppedIsFreed(t *testing.T, r *reactor.Reactor, k Kind) {
	before := r.Stats()
	func() {
		ev := mustNew(t, r, k)
		ev.Start()
		ev.Stop()
	}()
	collectUntilBack(t, r, k, before)
}

// A started event is its reactor's, not the collector's (docs/architecture.md §5): with
// every reference dropped, three collections and a loop turn, it is still
// there and still delivers. Stopped (in its callback) and dropped, it is
// freed.
func startedIsKept(t *testing.T, r *reactor.Reactor, k Kind) {
	if k.Fire != nil && k.Detach == nil {
		t.Skipf("StartedIsKept: %s has Fire but no Detach (see conform.Kind)", k.describe())
	}
	before := r.Stats()
	type heard struct {
		ev  event.Event
		err error
	}
	got := make(chan heard, 1)
	var fire func() error
	counted := false // the driver counts the kind in Stats().Handles
	func() {
		ev := mustNew(t, r, k)
		counted = k.Name != "" && r.Stats().Handles[k.Name] > before.Handles[k.Name]
		// The callback must not capture ev: it gets the event it notifies.
		if _, err := event.Subscribe(ev, func(e event.Event, _ any, err error) {
			select {
			case got <- heard{e, err}:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
		if k.Detach != nil {
			fire = k.Detach(ev)
		}
	}()
	for range 3 {
		runtime.GC()
	}
	turn(r)
	if s := r.Stats(); !k.OneShot && (s.Active <= before.Active || counted && s.Handles[k.Name] <= before.Handles[k.Name]) {
		t.Fatalf("a started %s with its references dropped was closed by the collector: %v, active %d", k.describe(), s.Handles, s.Active)
	}
	stop := serve(t, r)
	if fire != nil {
		if err := fire(); err != nil {
			stop()
			t.Fatalf("Fire: %v", err)
		}
	}
	var h heard
	select {
	case h = <-got:
	case <-time.After(safety):
		stop()
		t.Fatalf("a started %s with its references dropped did not deliver", k.describe())
	}
	stop()
	if errors.Is(h.err, event.ErrClosed) {
		t.Fatalf("a started %s with its references dropped was closed: its subscriber heard %v", k.describe(), h.err)
	}
	if err := h.ev.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	collectUntilBack(t, r, k, before)
}

// collectUntilBack collects and turns the loop until r has no more handles
// of k's kind and no more active events than before.
func collectUntilBack(t *testing.T, r *reactor.Reactor, k Kind, before reactor.Stats) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for s := r.Stats(); s.Handles[k.Name] > before.Handles[k.Name] || s.Active > before.Active; s = r.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("a dropped %s was not freed: %v, active %d", k.describe(), s.Handles, s.Active)
		}
		runtime.GC()
		turn(r)
	}
}

// turn runs one loop turn, waiting for a short while at most.
func turn(r *reactor.Reactor) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	r.RunOnce(ctx)
	cancel()
}

// Once the reactor's Close has begun, New and Start refuse with
// ErrReactorClosed, even from a close notification.
func closingReactorRefuses(t *testing.T, r *reactor.Reactor, k Kind) {
	ev := mustNew(t, r, k)
	var heard []error // every notification's error, in order
	var during error
	event.Subscribe(ev, func(_ event.Event, _ any, err error) {
		heard = append(heard, err)
		if errors.Is(err, event.ErrClosed) {
			_, during = k.New(r)
		}
	})
	ev.Start()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// The reactor's Close closes every event it holds, Go-owned ones
	// included: a started event's subscriber hears ErrClosed inside Close.
	// Only a one-shot event may have completed on its own first (a request
	// that finished while Close waited for it), and then its completion
	// was its last notification.
	if !ev.Flags().Has(event.Closed) {
		t.Errorf("a started event (%s) is not closed after the reactor's Close", k.describe())
	}
	switch {
	case len(heard) == 0:
		t.Errorf("the subscriber of a started event (%s) heard nothing at the reactor's Close, want ErrClosed", k.describe())
	case errors.Is(heard[len(heard)-1], event.ErrClosed):
		if !errors.Is(during, reactor.ErrReactorClosed) {
			t.Errorf("New inside a close notification = %v, want ErrReactorClosed", during)
		}
	case !k.OneShot:
		t.Errorf("the subscriber of a started event (%s) last heard %v at the reactor's Close, want ErrClosed", k.describe(), heard[len(heard)-1])
	}
	if _, err := k.New(r); !errors.Is(err, reactor.ErrReactorClosed) {
		t.Errorf("New after Close = %v, want ErrReactorClosed", err)
	}
}

// serve runs the loop in a goroutine until the returned stop is called
// (once or more).
func serve(t *testing.T, r *reactor.Reactor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Serve(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func waitState(t *testing.T, ev event.Event, want event.State) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for event.StateOf(ev) != want {
		if time.Now().After(deadline) {
			t.Fatalf("state %v, want %v", event.StateOf(ev), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
