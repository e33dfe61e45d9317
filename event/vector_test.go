package event_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// probe is the test kind: a minimal event that embeds event.Base, implements
// eventkind.Ops on a private type (as Future does) and records what Base asks
// of it. loop says whether Start and Stop count loop references.
type probe struct {
	event.Base
	owner   event.Owner
	name    string
	arms    int
	disarms int
	frees   []bool
	armErr  error
	onFree  func()
}

type probeOps probe

func newProbe(o event.Owner, name string, loop bool, flags event.Flags) *probe {
	p := &probe{owner: o, name: name}
	eventkind.Init(&p.Base, (*probeOps)(p), loop, flags)
	return p
}

func (o *probeOps) Owner() event.Owner { return o.owner }
func (o *probeOps) Event() event.Event { return (*probe)(o) }
func (o *probeOps) Arm() error         { o.arms++; return o.armErr }
func (o *probeOps) Disarm()            { o.disarms++ }
func (o *probeOps) Describe() string   { return "Probe(" + o.name + ")" }

func (o *probeOps) Free(free bool) {
	o.frees = append(o.frees, free)
	if o.onFree != nil {
		o.onFree()
	}
}

// fire runs one notification pass (eventkind.Notify) with the owner held.
func (p *probe) fire(result any, err error) error {
	var nerr error
	if xerr := p.owner.Call(func() { nerr = eventkind.Notify(&p.Base, result, err) }); xerr != nil {
		return xerr
	}
	return nerr
}

// complete ends the probe (eventkind.Complete) with the owner held.
func (p *probe) complete(result any, err error) error {
	var nerr error
	if xerr := p.owner.Call(func() { nerr = eventkind.Complete(&p.Base, result, err) }); xerr != nil {
		return xerr
	}
	return nerr
}

// act is something a callback does when it is called in the first pass.
type act struct {
	op     string // "del", "add" or "notify"
	target string
}

func del(n string) act { return act{"del", n} }
func add(n string) act { return act{"add", n} }

var nestedNotify = act{op: "notify"}

func TestVectorPassRules(t *testing.T) {
	tests := []struct {
		name   string
		acts   map[string][]act // what each callback does in the first pass
		calls  []string         // who is called in the first pass (any order)
		after  []string         // who is subscribed after it
		nested int              // how many "nested notify" errors are expected
	}{
		{name: "no mutation", calls: []string{"A", "B", "C", "D"}, after: []string{"A", "B", "C", "D"}},
		{name: "remove before its turn", acts: map[string][]act{"A": {del("C")}},
			calls: []string{"A", "B", "D"}, after: []string{"A", "B", "D"}},
		{name: "remove an already called one", acts: map[string][]act{"C": {del("A")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"B", "C", "D"}},
		{name: "remove the one just before", acts: map[string][]act{"C": {del("B")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "C", "D"}},
		{name: "remove itself", acts: map[string][]act{"B": {del("B")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "C", "D"}},
		{name: "remove the last", acts: map[string][]act{"A": {del("D")}},
			calls: []string{"A", "B", "C"}, after: []string{"A", "B", "C"}},
		{name: "the last removes itself", acts: map[string][]act{"D": {del("D")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "B", "C"}},
		{name: "remove several", acts: map[string][]act{"B": {del("A"), del("D"), del("C")}},
			calls: []string{"A", "B"}, after: []string{"B"}},
		{name: "remove called and waiting ones", acts: map[string][]act{"C": {del("A"), del("D")}},
			calls: []string{"A", "B", "C"}, after: []string{"B", "C"}},
		{name: "the last removes all earlier ones", acts: map[string][]act{"D": {del("A"), del("B"), del("C")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"D"}},
		{name: "the first removes all others", acts: map[string][]act{"A": {del("B"), del("C"), del("D")}},
			calls: []string{"A"}, after: []string{"A"}},
		{name: "every one removes itself",
			acts:  map[string][]act{"A": {del("A")}, "B": {del("B")}, "C": {del("C")}, "D": {del("D")}},
			calls: []string{"A", "B", "C", "D"}, after: nil},
		{name: "two callbacks each remove a called one",
			acts:  map[string][]act{"B": {del("A")}, "C": {del("B")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"C", "D"}},
		{name: "add during the pass", acts: map[string][]act{"A": {add("E")}},
			calls: []string{"A", "B", "C", "D", "E"}, after: []string{"A", "B", "C", "D", "E"}},
		{name: "add from the last", acts: map[string][]act{"D": {add("E"), add("F")}},
			calls: []string{"A", "B", "C", "D", "E", "F"}, after: []string{"A", "B", "C", "D", "E", "F"}},
		{name: "added one adds another", acts: map[string][]act{"B": {add("E")}, "E": {add("F")}},
			calls: []string{"A", "B", "C", "D", "E", "F"}, after: []string{"A", "B", "C", "D", "E", "F"}},
		{name: "added then removed before its turn", acts: map[string][]act{"A": {add("E")}, "B": {del("E")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "B", "C", "D"}},
		{name: "added one removes called ones", acts: map[string][]act{"A": {add("E")}, "E": {del("A"), del("C")}},
			calls: []string{"A", "B", "C", "D", "E"}, after: []string{"B", "D", "E"}},
		{name: "remove and add in one call", acts: map[string][]act{"B": {del("A"), add("E"), del("D")}},
			calls: []string{"A", "B", "C", "E"}, after: []string{"B", "C", "E"}},
		// A removed waiting callback that is added again is a new
		// subscription made during the pass: it is called once.
		{name: "waiting one removed and re-added", acts: map[string][]act{"A": {del("C"), add("C")}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "B", "C", "D"}},
		// A called callback removed and added again is also a new
		// subscription made during the pass, so it is called again.
		{name: "called one removed and re-added", acts: map[string][]act{"C": {del("A"), add("A")}},
			calls: []string{"A", "A", "B", "C", "D"}, after: []string{"A", "B", "C", "D"}},
		{name: "nested notify is refused", acts: map[string][]act{"B": {nestedNotify}},
			calls: []string{"A", "B", "C", "D"}, after: []string{"A", "B", "C", "D"}, nested: 1},
		{name: "nested notify after removals", acts: map[string][]act{"A": {nestedNotify}, "C": {del("A"), nestedNotify, del("D")}},
			calls: []string{"A", "B", "C"}, after: []string{"B", "C"}, nested: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &event.Serial{}
			ev := newProbe(s, "vector", true, 0)
			cbs := map[string]*event.Callback{}
			var calls []string
			firstPass := true
			nested := 0
			for _, n := range []string{"A", "B", "C", "D", "E", "F"} {
				cbs[n] = event.NewCallback(func(e event.Event, _ any, _ error) {
					calls = append(calls, n)
					if !firstPass {
						return
					}
					for _, a := range tc.acts[n] {
						var err error
						switch a.op {
						case "del":
							err = e.DelCallback(cbs[a.target])
						case "add":
							err = e.AddCallback(cbs[a.target])
						case "notify":
							if err = ev.fire("inner", nil); errors.Is(err, event.ErrNestedNotify) {
								nested++
								err = nil
							}
						}
						if err != nil {
							t.Errorf("%s: %s %s: %v", n, a.op, a.target, err)
						}
					}
				})
			}
			for _, n := range []string{"A", "B", "C", "D"} {
				if err := ev.AddCallback(cbs[n]); err != nil {
					t.Fatal(err)
				}
			}
			if err := ev.fire("outer", nil); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			slices.Sort(calls)
			if diff := cmp.Diff(tc.calls, calls); diff != "" {
				t.Errorf("first pass calls (-want +got):\n%s", diff)
			}
			if nested != tc.nested {
				t.Errorf("nested notify refused %d times, want %d", nested, tc.nested)
			}
			// The vector left behind is consistent: a second pass calls
			// exactly the remaining subscribers, and the references match.
			firstPass, calls = false, nil
			if err := ev.fire("again", nil); err != nil {
				t.Fatalf("second Notify: %v", err)
			}
			slices.Sort(calls)
			if diff := cmp.Diff(tc.after, calls); diff != "" {
				t.Errorf("subscribers after the pass (-want +got):\n%s", diff)
			}
			if got := eventkind.Subscribers(ev); got != len(tc.after) {
				t.Errorf("Subscribers = %d, want %d", got, len(tc.after))
			}
			for n, cb := range cbs {
				want := 1 // the creator's reference
				if slices.Contains(tc.after, n) {
					want++
				}
				if got := cb.Refs(); got != want {
					t.Errorf("%s.Refs() = %d, want %d", n, got, want)
				}
			}
		})
	}
}

// TestVectorSwapWithLast checks the O(1) removal outside a pass: the last
// callback takes the removed one's place and nothing else moves.
func TestVectorSwapWithLast(t *testing.T) {
	tests := []struct {
		remove []string
		order  []string
	}{
		{remove: nil, order: []string{"A", "B", "C", "D", "E"}},
		{remove: []string{"B"}, order: []string{"A", "E", "C", "D"}},
		{remove: []string{"A"}, order: []string{"E", "B", "C", "D"}},
		{remove: []string{"E"}, order: []string{"A", "B", "C", "D"}},
		{remove: []string{"B", "C"}, order: []string{"A", "E", "D"}},
		{remove: []string{"A", "B", "C", "D", "E"}, order: nil},
	}
	for _, tc := range tests {
		s := &event.Serial{}
		ev := newProbe(s, "swap", false, 0)
		var order []string
		cbs := map[string]*event.Callback{}
		for _, n := range []string{"A", "B", "C", "D", "E"} {
			cbs[n] = event.NewCallback(func(event.Event, any, error) { order = append(order, n) })
			if err := ev.AddCallback(cbs[n]); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range tc.remove {
			if err := ev.DelCallback(cbs[n]); err != nil {
				t.Fatalf("DelCallback(%s): %v", n, err)
			}
			if got := cbs[n].Refs(); got != 1 {
				t.Errorf("removing %s left Refs = %d, want 1", n, got)
			}
		}
		if err := ev.fire(nil, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.order, order); diff != "" {
			t.Errorf("remove %v: call order (-want +got):\n%s", tc.remove, diff)
		}
	}
}

func TestDelCallbackNotSubscribed(t *testing.T) {
	s := &event.Serial{}
	ev := newProbe(s, "del", false, 0)
	cb := event.NewCallback(func(event.Event, any, error) {})
	if err := ev.DelCallback(cb); !errors.Is(err, event.ErrNotSubscribed) {
		t.Fatalf("DelCallback of a stranger = %v, want ErrNotSubscribed", err)
	}
	if err := ev.AddCallback(cb); err != nil {
		t.Fatal(err)
	}
	if err := ev.DelCallback(cb); err != nil {
		t.Fatal(err)
	}
	if err := ev.DelCallback(cb); !errors.Is(err, event.ErrNotSubscribed) {
		t.Fatalf("second DelCallback = %v, want ErrNotSubscribed", err)
	}
	if got := cb.Refs(); got != 1 {
		t.Fatalf("Refs = %d after add/del/del, want 1", got)
	}
}

func TestNestedNotifyAndCompleteRefused(t *testing.T) {
	s := &event.Serial{}
	ev := newProbe(s, "nested", true, 0)
	var inner []error
	var got []any
	for i := range 3 {
		_, err := event.Subscribe(ev, func(_ event.Event, r any, _ error) {
			got = append(got, r)
			if i == 0 {
				inner = append(inner, ev.fire("inner", nil), ev.complete("inner", nil))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := ev.fire("outer", nil); err != nil {
		t.Fatalf("outer Notify: %v", err)
	}
	if diff := cmp.Diff([]any{"outer", "outer", "outer"}, got); diff != "" {
		t.Errorf("outer pass results (-want +got):\n%s", diff)
	}
	for _, err := range inner {
		if !errors.Is(err, event.ErrNestedNotify) {
			t.Errorf("inner notification returned %v, want ErrNestedNotify", err)
		}
	}
	if ev.Flags().Has(event.Closed) {
		t.Error("a refused nested Complete closed the event")
	}
}
