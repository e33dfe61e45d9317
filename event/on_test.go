package event_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// A ticks is a repeating kind whose notifications carry an int: the
// smallest event.Source.
type ticks struct {
	event.Base
	owner event.Owner
}

type ticksOps ticks

func newTicks(o event.Owner) *ticks {
	t := &ticks{owner: o}
	eventkind.Init(&t.Base, (*ticksOps)(t), true, event.GoOwned)
	return t
}

// Result names the kind's result type: an int.
func (t *ticks) Result(res any) int {
	n, _ := res.(int)
	return n
}

func (t *ticks) tick(n int, err error) {
	t.owner.Call(func() { eventkind.Notify(&t.Base, n, err) })
}

func (o *ticksOps) Owner() event.Owner { return o.owner }
func (o *ticksOps) Event() event.Event { return (*ticks)(o) }
func (o *ticksOps) Arm() error         { return nil }
func (o *ticksOps) Disarm()            {}
func (o *ticksOps) Free(bool)          {}
func (o *ticksOps) Describe() string   { return "Ticks" }

func TestOnDeliversTypedAndLeavesOutTheClose(t *testing.T) {
	s := &event.Serial{}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		opts []event.OnOption
		want []string
	}{
		{"default", nil, []string{"1 <nil>", "0 boom", "2 <nil>"}},
		{"WithClose", []event.OnOption{event.WithClose}, []string{"1 <nil>", "0 boom", "2 <nil>", "0 event: closed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTicks(s)
			var got []string
			if _, err := event.On(tk, func(n int, err error) { got = append(got, fmt.Sprint(n, " ", err)) }, tc.opts...); err != nil {
				t.Fatalf("On: %v", err)
			}
			tk.Start()
			tk.tick(1, nil)
			tk.tick(0, boom)
			tk.tick(2, nil)
			tk.Close()
			if diff := cmpDiff(tc.want, got); diff != "" {
				t.Errorf("notifications (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnCallbackUnsubscribes(t *testing.T) {
	s := &event.Serial{}
	tk := newTicks(s)
	n := 0
	cb, err := event.On(tk, func(int, error) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	tk.Start()
	tk.tick(1, nil)
	if err := tk.DelCallback(cb); err != nil {
		t.Fatalf("DelCallback(On's callback) = %v", err)
	}
	tk.tick(2, nil)
	if n != 1 {
		t.Errorf("calls = %d, want 1 (none after DelCallback)", n)
	}
}

func TestOnFutureReplaysAndHearsCloseOnlyWhenAsked(t *testing.T) {
	s := &event.Serial{}
	done := event.NewFuture[string](s)
	done.Resolve("v")
	var got []string
	if _, err := event.On(done, func(v string, err error) { got = append(got, v) }); err != nil {
		t.Fatalf("On(completed future) = %v, want a replay", err)
	}
	if diff := cmpDiff([]string{"v"}, got); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}

	for _, opts := range [][]event.OnOption{nil, {event.WithClose}} {
		closed := event.NewFuture[string](s)
		heard := 0
		var herr error
		event.On(closed, func(_ string, err error) { heard, herr = heard+1, err }, opts...)
		closed.Close()
		want := 0
		if len(opts) > 0 {
			want = 1
		}
		if heard != want || (want == 1 && !errors.Is(herr, event.ErrClosed)) {
			t.Errorf("On(opts %v) of a future closed unsettled: %d calls (err %v), want %d", opts, heard, herr, want)
		}
	}
}

func TestOnRefusesNil(t *testing.T) {
	s := &event.Serial{}
	if _, err := event.On(newTicks(s), nil); !errors.Is(err, event.ErrNilCallback) {
		t.Errorf("On(nil fn) = %v, want ErrNilCallback", err)
	}
	var nilTicks *ticks
	if _, err := event.On(nilTicks, func(int, error) {}); !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("On(typed nil) = %v, want ErrNilEvent", err)
	}
}

// Future has OnDone, as the other kinds that store a result: a value
// resolved later reaches it, a done future replays to it, and a close
// before it was done is left out unless asked for.
func TestFutureOnDone(t *testing.T) {
	s := &event.Serial{}
	var got []string
	record := func(v string, err error) { got = append(got, fmt.Sprintf("%s %v", v, err)) }
	later := event.NewFuture[string](s)
	if _, err := later.OnDone(record); err != nil {
		t.Fatal(err)
	}
	later.Resolve("later")
	done := event.NewFuture[string](s)
	done.Resolve("done")
	if _, err := done.OnDone(record); err != nil {
		t.Fatal(err)
	}
	closed := event.NewFuture[string](s)
	closed.OnDone(record)
	closed.Close()
	asked := event.NewFuture[string](s)
	asked.OnDone(func(_ string, err error) {
		got = append(got, fmt.Sprintf("closed: %v", errors.Is(err, event.ErrClosed)))
	}, event.WithClose)
	asked.Close()
	if diff := cmpDiff([]string{"later <nil>", "done <nil>", "closed: true"}, got); diff != "" {
		t.Errorf("OnDone (-want +got):\n%s", diff)
	}
	if _, err := (*event.Future[string])(nil).OnDone(record); !errors.Is(err, event.ErrNilEvent) {
		t.Errorf("OnDone of a nil future = %v, want ErrNilEvent", err)
	}
}

// A tickRef stands for a ticks as an event reference does: it embeds the
// event, so the notifications its callbacks get name the ticks, not it,
// and its Result is its own (here, offset by its field).
type tickRef struct {
	event.Event
	offset int
}

func (r *tickRef) Result(res any) int {
	n, _ := res.(int)
	return n + r.offset
}

// TestOnThroughAReference: On over an event whose notifications name
// another event delivers the results as the event it was given reads them,
// and its callback does not keep that event from being collected; the
// close that comes after carries no result.
func TestOnThroughAReference(t *testing.T) {
	s := &event.Serial{}
	tk := newTicks(s)
	var got []string
	collected := make(chan struct{})
	func() {
		ref := &tickRef{Event: tk, offset: 100}
		runtime.AddCleanup(ref, func(c chan struct{}) { close(c) }, collected)
		if _, err := event.On(ref, func(n int, err error) { got = append(got, fmt.Sprint(n, " ", err)) }, event.WithClose); err != nil {
			t.Fatalf("On: %v", err)
		}
		tk.Start()
		tk.tick(1, nil)
	}()
	awaitCollected(t, collected)
	tk.Close()
	if diff := cmpDiff([]string{"101 <nil>", "0 event: closed"}, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// A closer is a result the callback owns, as an accepted connection is.
type closer struct{ closed int }

func (c *closer) Close() error {
	c.closed++
	return nil
}

// TestOnThroughACollectedReference: a result that comes after On's
// reference was collected, and before the event behind it is closed, is
// not delivered and does not panic; one that the callback would have owned
// (an io.Closer) is closed. Notifications without a result still come.
func TestOnThroughACollectedReference(t *testing.T) {
	s := &event.Serial{}
	tk := newTicks(s)
	var got []string
	collected := make(chan struct{})
	func() {
		ref := &tickRef{Event: tk}
		runtime.AddCleanup(ref, func(c chan struct{}) { close(c) }, collected)
		if _, err := event.On(ref, func(n int, err error) { got = append(got, fmt.Sprint(n, " ", err)) }, event.WithClose); err != nil {
			t.Fatalf("On: %v", err)
		}
	}()
	awaitCollected(t, collected)
	tk.Start()
	owned := &closer{}
	tk.tick(7, nil)
	s.Call(func() { eventkind.Notify(&tk.Base, owned, nil) })
	s.Call(func() { eventkind.Notify(&tk.Base, nil, errors.New("failed")) })
	tk.Close()
	if diff := cmpDiff([]string{"0 failed", "0 event: closed"}, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if owned.closed != 1 {
		t.Errorf("the owned result was closed %d times, want once", owned.closed)
	}
}

// awaitCollected collects until collected is closed (by the cleanup of the
// reference given to On), failing if a hundred collections do not take it.
func awaitCollected(t *testing.T, collected chan struct{}) {
	t.Helper()
	for range 100 {
		runtime.GC()
		select {
		case <-collected:
			return
		default:
		}
	}
	t.Fatal("the reference was not collected: the callback holds it")
}
