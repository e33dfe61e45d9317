package event_test

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// The Owner a user reaches (r.Owner(), event.OwnerOf) has only what a user
// needs: the count of active events and the reports are the kinds' and the
// owner's business (eventkind.OwnerHooks), not a method a user can call.
func TestOwnerIsWhatAUserNeeds(t *testing.T) {
	ot := reflect.TypeOf((*event.Owner)(nil)).Elem()
	var got []string
	for i := range ot.NumMethod() {
		got = append(got, ot.Method(i).Name)
	}
	if diff := cmp.Diff([]string{"Call", "Owned", "Owner", "Post"}, got); diff != "" {
		t.Errorf("event.Owner's methods (-want +got):\n%s", diff)
	}
	if _, ok := any(&event.Serial{}).(eventkind.OwnerHooks); !ok {
		t.Error("event.Serial does not keep the count and take reports (eventkind.OwnerHooks)")
	}
}

// plainOwner is a custom Owner with no hooks: a Serial's Call and Post only.
type plainOwner struct{ s *event.Serial }

func (p plainOwner) Owner() event.Owner    { return p }
func (p plainOwner) Owned() bool           { return p.s.Owned() }
func (p plainOwner) Call(fn func()) error  { return p.s.Call(fn) }
func (p plainOwner) Post(fn func()) error  { return p.s.Post(fn) }
func (p plainOwner) serial() *event.Serial { return p.s }

// hookedOwner is a custom Owner with the hooks: it counts and records.
type hookedOwner struct {
	plainOwner
	mu      sync.Mutex
	active  int
	reports []string
}

func (h *hookedOwner) Owner() event.Owner { return h }
func (h *hookedOwner) ActiveDelta(n int)  { h.active += n }
func (h *hookedOwner) Report(_ event.Event, msg string, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, msg)
}

// recordSlog records the messages logged to slog's default logger while
// the test runs.
type recordSlog struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recordSlog) Enabled(context.Context, slog.Level) bool { return true }
func (r *recordSlog) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *recordSlog) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordSlog) WithGroup(string) slog.Handler      { return r }

func logToRecord(t *testing.T) *recordSlog {
	rec := &recordSlog{}
	prev := slog.Default()
	slog.SetDefault(slog.New(rec))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return rec
}

// panicOnce starts a loop event of o, fires it into a panicking callback
// and closes it, returning the active count seen while it was started.
func panicOnce(t *testing.T, o event.Owner, active func() int) (whileStarted int) {
	t.Helper()
	p := newProbe(o, "hooks", true, 0)
	if _, err := event.Subscribe(p, func(event.Event, any, error) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	whileStarted = active()
	if err := p.fire(1, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	return whileStarted
}

// An Owner with eventkind.OwnerHooks keeps the count and hears the
// reports; one without has its reports logged to slog's default logger and
// keeps no count, and its events work all the same.
func TestOwnerHooksFoundByAssertion(t *testing.T) {
	t.Run("hooked", func(t *testing.T) {
		rec := logToRecord(t)
		h := &hookedOwner{plainOwner: plainOwner{&event.Serial{}}}
		if n := panicOnce(t, h, func() int { return h.active }); n != 1 {
			t.Errorf("active while started = %d, want 1", n)
		}
		if h.active != 0 {
			t.Errorf("active after Close = %d, want 0", h.active)
		}
		if !slices.Contains(h.reports, "callback panicked") {
			t.Errorf("the owner heard %q, want the callback's panic", h.reports)
		}
		if len(rec.msgs) != 0 {
			t.Errorf("logged %q, want nothing: the owner takes the reports", rec.msgs)
		}
	})
	t.Run("plain", func(t *testing.T) {
		rec := logToRecord(t)
		o := plainOwner{&event.Serial{}}
		panicOnce(t, o, func() int { return o.serial().Active() })
		if o.serial().Active() != 0 {
			t.Errorf("the Serial behind a plain owner counted %d", o.serial().Active())
		}
		if !slices.Contains(rec.msgs, "uvevent: callback panicked") {
			t.Errorf("logged %q, want the callback's panic", rec.msgs)
		}
	})
}
