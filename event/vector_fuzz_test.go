package event_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// fuzzK is the number of distinct callbacks a fuzz run plays with.
const fuzzK = 6

// vectorModel is the reference implementation of the callbacks vector: an
// order-keeping slice of subscriptions. It does not choose the call order
// (that is the real vector's business); it checks each call the real event
// makes against the three rules:
//
//   - a call must hit a live subscription not yet called in this pass (so a
//     callback removed before its turn is never called, and nobody is called
//     twice for one subscription);
//   - at the end of a pass every live subscription, including those added
//     during the pass, has been called.
type vectorModel struct {
	subs   []modelSub
	inPass bool
}

type modelSub struct {
	id     int
	called bool
}

func (m *vectorModel) find(id int) int {
	for i, s := range m.subs {
		if s.id == id {
			return i
		}
	}
	return -1
}

func (m *vectorModel) add(id int) { m.subs = append(m.subs, modelSub{id: id}) }

func (m *vectorModel) remove(id int) {
	i := m.find(id)
	m.subs = append(m.subs[:i], m.subs[i+1:]...)
}

func (m *vectorModel) begin() {
	m.inPass = true
	for i := range m.subs {
		m.subs[i].called = false
	}
}

// call records that the real event called id.
func (m *vectorModel) call(id int) error {
	if !m.inPass {
		return fmt.Errorf("callback %d called outside a pass", id)
	}
	i := m.find(id)
	switch {
	case i < 0:
		return fmt.Errorf("callback %d called but not subscribed (removed before its turn?)", id)
	case m.subs[i].called:
		return fmt.Errorf("callback %d called twice for one subscription", id)
	}
	m.subs[i].called = true
	return nil
}

// end closes a pass and returns the live subscriptions never called.
func (m *vectorModel) end() []int {
	m.inPass = false
	var missed []int
	for _, s := range m.subs {
		if !s.called {
			missed = append(missed, s.id)
		}
	}
	return missed
}

// ids lists the subscribed callbacks by id, sorted.
func (m *vectorModel) ids() []int {
	var out []int
	for id := range fuzzK {
		if m.find(id) >= 0 {
			out = append(out, id)
		}
	}
	return out
}

// fuzzRun plays one input: top-level operations, and inside each callback
// call the next byte decides what that call does to the vector.
type fuzzRun struct {
	t      *testing.T
	data   []byte
	ev     *probe
	cbs    [fuzzK]*event.Callback
	model  vectorModel
	closed bool
	calls  int
}

func (r *fuzzRun) next() (byte, bool) {
	if len(r.data) == 0 {
		return 0, false
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b, true
}

// add subscribes callback j unless it is subscribed already (the model does
// not describe duplicate subscriptions).
func (r *fuzzRun) add(j int) {
	if r.model.find(j) >= 0 {
		return
	}
	err := r.ev.AddCallback(r.cbs[j])
	if r.closed {
		if !errors.Is(err, event.ErrClosed) {
			r.t.Errorf("AddCallback(%d) on a closed event = %v, want ErrClosed", j, err)
		}
		return
	}
	if err != nil {
		r.t.Errorf("AddCallback(%d) = %v", j, err)
		return
	}
	r.model.add(j)
}

func (r *fuzzRun) del(j int) {
	err := r.ev.DelCallback(r.cbs[j])
	if r.model.find(j) < 0 {
		if !errors.Is(err, event.ErrNotSubscribed) {
			r.t.Errorf("DelCallback(%d) of a non-subscriber = %v, want ErrNotSubscribed", j, err)
		}
		return
	}
	if err != nil {
		r.t.Errorf("DelCallback(%d) = %v", j, err)
		return
	}
	r.model.remove(j)
}

// onCall is callback k's body.
func (r *fuzzRun) onCall(k int) {
	r.calls++
	if err := r.model.call(k); err != nil {
		r.t.Error(err)
	}
	op, ok := r.next()
	if !ok {
		return
	}
	arg, _ := r.next()
	j := int(arg) % fuzzK
	switch op % 8 {
	case 3:
		r.add(j)
	case 4:
		r.del(j)
	case 5:
		r.del(k)
	case 6:
		if err := r.ev.fire("nested", nil); !errors.Is(err, event.ErrNestedNotify) {
			r.t.Errorf("nested Notify from callback %d = %v, want ErrNestedNotify", k, err)
		}
	case 7: // remove and subscribe again in one call
		r.del(j)
		r.add(j)
	}
}

// check compares the real vector with the model outside a pass.
func (r *fuzzRun) check(step string) {
	if got, want := eventkind.Subscribers(r.ev), len(r.model.subs); got != want {
		r.t.Errorf("%s: Subscribers = %d, model has %d", step, got, want)
	}
	want := make([]int, fuzzK)
	got := make([]int, fuzzK)
	for id := range fuzzK {
		want[id] = 1 // the run keeps the creator's reference
		if r.model.find(id) >= 0 {
			want[id]++
		}
		got[id] = r.cbs[id].Refs()
	}
	if !slices.Equal(want, got) { // cmp.Diff only to explain a failure: it is slow
		r.t.Errorf("%s: callback references (-model +event), subscribed %v:\n%s",
			step, r.model.ids(), cmp.Diff(want, got))
	}
}

func (r *fuzzRun) pass(step string, do func() error) {
	r.model.begin()
	if err := do(); err != nil {
		r.t.Errorf("%s: %v", step, err)
	}
	if missed := r.model.end(); len(missed) > 0 {
		r.t.Errorf("%s: subscribed callbacks %v were not called", step, missed)
	}
}

func runVectorFuzz(t *testing.T, data []byte) { playVector(t, data, (*fuzzRun).onCall) }

// playVector plays one input with call as the callbacks' body.
func playVector(t *testing.T, data []byte, call func(r *fuzzRun, k int)) {
	s := &event.Serial{}
	r := &fuzzRun{t: t, data: data, ev: newProbe(s, "fuzz", true, 0)}
	for k := range fuzzK {
		r.cbs[k] = event.NewCallback(func(event.Event, any, error) { call(r, k) })
	}
	for step := 0; len(r.data) > 0 && !r.closed && !t.Failed(); step++ {
		op, _ := r.next()
		arg, _ := r.next()
		j := int(arg) % fuzzK
		name := fmt.Sprintf("step %d (op %d, arg %d)", step, op%8, j)
		switch op % 8 {
		case 0, 1, 2:
			r.add(j)
		case 3, 4:
			r.del(j)
		case 5, 6:
			r.pass(name+" notify", func() error { return r.ev.fire(step, nil) })
		case 7:
			r.closed = true
			r.pass(name+" close", r.ev.Close)
		}
		if r.closed { // by op 7, or by a callback during a pass
			r.model.subs = nil // a closed event lets go of everyone after its pass
		}
		r.check(name)
	}
	if r.closed {
		return
	}
	// One last pass with every action used up: exactly the remaining
	// subscribers are called once.
	r.data = nil
	before := r.calls
	r.pass("final notify", func() error { return r.ev.fire("final", nil) })
	if got, want := r.calls-before, len(r.model.subs); got != want {
		t.Errorf("final pass made %d calls, want %d", got, want)
	}
	r.check("final")
}

func FuzzVector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 3, 5, 0})                         // add 4, notify
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 3, 3, 1, 5, 0})                   // remove one outside a pass
	f.Add([]byte{0, 0, 0, 1, 0, 2, 5, 0, 0, 0, 4, 2})                   // first removes the last
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 3, 5, 0, 0, 0, 0, 0, 4, 0, 0, 0}) // third removes the first
	f.Add([]byte{0, 0, 0, 1, 5, 0, 3, 4, 3, 5})                         // adds during the pass
	f.Add([]byte{0, 0, 0, 1, 0, 2, 5, 0, 5, 0, 5, 0, 5, 0})             // every one removes itself
	f.Add([]byte{0, 0, 0, 1, 5, 0, 6, 0, 6, 0})                         // nested notify
	f.Add([]byte{0, 0, 0, 1, 0, 2, 5, 0, 0, 0, 7, 0, 0, 0})             // remove and re-add a called one
	f.Add([]byte{0, 0, 0, 1, 0, 2, 7, 0, 3, 4, 4, 1, 0, 0})             // close with mutations
	f.Add([]byte{0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 6, 1, 4, 0, 4, 1, 4, 2, 4, 3, 4, 4, 4, 5})
	f.Fuzz(runVectorFuzz)
}
