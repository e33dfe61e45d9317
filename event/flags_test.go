package event_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"golang.org/x/sys/unix"
)

// report is one call of Owner.Report.
type report struct {
	Event string
	Msg   string
	Err   error
}

// reportingSerial returns a Serial whose reports are appended to *got.
func reportingSerial(got *[]report) *event.Serial {
	s := &event.Serial{}
	s.ReportFunc = func(ev event.Event, msg string, err error) {
		info := "" // reports may come without an event (a collected one)
		if ev != nil {
			info = ev.Info()
		}
		*got = append(*got, report{Event: info, Msg: msg, Err: err})
	}
	return s
}

func TestFlagsString(t *testing.T) {
	tests := []struct {
		f    event.Flags
		want string
	}{
		{0, "0"},
		{event.Closed, "Closed"},
		{event.Closed | event.Hidden, "Closed|Hidden"},
		{event.ResultUsed | event.ErrorCaught | event.ValueResult, "ResultUsed|ErrorCaught|ValueResult"},
		{event.GoOwned | event.NoFreeMemory | event.ErrorHandled | event.Reference,
			"GoOwned|NoFreeMemory|ErrorHandled|Reference"},
		{event.ObjectRef | event.CloseFD, "ObjectRef|CloseFD"},
	}
	for _, tc := range tests {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("Flags(%#x).String() = %q, want %q", uint32(tc.f), got, tc.want)
		}
	}
	if !(event.Closed | event.Hidden).Has(event.Hidden) || (event.Closed).Has(event.Closed|event.Hidden) {
		t.Error("Has must report whether all the given bits are set")
	}
}

func TestFlagClosed(t *testing.T) {
	s := &event.Serial{}
	ev := newProbe(s, "closed", true, 0)
	if ev.Flags().Has(event.Closed) {
		t.Fatal("a new event is Closed")
	}
	if err := ev.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !ev.Flags().Has(event.Closed) {
		t.Fatal("Close did not set Closed")
	}
	if err := ev.Start(); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	cb := event.NewCallback(func(event.Event, any, error) { t.Error("callback of a closed event called") })
	if err := ev.AddCallback(cb); !errors.Is(err, event.ErrClosed) {
		t.Errorf("AddCallback after Close = %v, want ErrClosed", err)
	}
	if err := ev.Stop(); err != nil {
		t.Errorf("Stop after Close = %v, want nil", err)
	}
	if err := ev.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if ev.disarms != 0 || len(ev.frees) > 1 {
		t.Errorf("closing a never-started event twice: disarms=%d frees=%v", ev.disarms, ev.frees)
	}
	ev.Dispose()
	if diff := cmp.Diff([]bool{true}, ev.frees); diff != "" {
		t.Errorf("Close, Close, Dispose: Free calls (-want +got):\n%s", diff)
	}
	if got := cb.Refs(); got != 1 {
		t.Errorf("refused callback holds %d references, want 1", got)
	}
}

func TestFlagResultUsed(t *testing.T) {
	var reps []report
	s := reportingSerial(&reps)

	unused := event.NewFuture[any](s)
	if err := unused.Resolve(42); err != nil {
		t.Fatal(err)
	}
	if unused.Flags().Has(event.ResultUsed) {
		t.Error("ResultUsed set with nobody subscribed")
	}
	unused.Dispose()
	want := []report{{Event: "Future(completed)", Msg: "result never used"}}
	if diff := cmp.Diff(want, reps); diff != "" {
		t.Errorf("reports for an unused result (-want +got):\n%s", diff)
	}

	reps = nil
	used := event.NewFuture[any](s)
	if _, err := event.Subscribe(used, func(event.Event, any, error) {}); err != nil {
		t.Fatal(err)
	}
	if !used.Flags().Has(event.ResultUsed) {
		t.Error("Subscribe did not set ResultUsed")
	}
	used.Resolve(42)
	used.Dispose()

	replayed := event.NewFuture[any](s)
	replayed.Resolve("late")
	if err := replayed.Replay(event.NewCallback(func(event.Event, any, error) {})); err != nil {
		t.Fatal(err)
	}
	if !replayed.Flags().Has(event.ResultUsed) {
		t.Error("Replay did not set ResultUsed")
	}
	replayed.Dispose()
	if len(reps) != 0 {
		t.Errorf("used results were reported: %+v", reps)
	}
}

func TestFlagErrorCaught(t *testing.T) {
	var reps []report
	s := reportingSerial(&reps)
	boom := errors.New("boom")

	lost := event.NewFuture[any](s)
	lost.Reject(boom)
	lost.Dispose()
	want := []report{{Event: "Future(failed: boom)", Msg: "unhandled error", Err: boom}}
	opt := cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) })
	if diff := cmp.Diff(want, reps, opt); diff != "" {
		t.Errorf("reports for a lost error (-want +got):\n%s", diff)
	}

	reps = nil
	caught := event.NewFuture[any](s)
	var got error
	if _, err := event.Subscribe(caught, func(_ event.Event, _ any, err error) { got = err }); err != nil {
		t.Fatal(err)
	}
	if !caught.Flags().Has(event.ErrorCaught) {
		t.Error("Subscribe did not set ErrorCaught")
	}
	caught.Reject(boom)
	caught.Dispose()
	if !errors.Is(got, boom) {
		t.Errorf("subscriber got %v, want boom", got)
	}

	// A non-replaying kind reports an error nobody receives at once.
	p := newProbe(s, "p", true, 0)
	p.fire(nil, boom)
	q := newProbe(s, "q", true, 0)
	event.Subscribe(q, func(event.Event, any, error) {})
	q.fire(nil, boom)
	want = []report{{Event: "Probe(p)", Msg: "unhandled error", Err: boom}}
	if diff := cmp.Diff(want, reps, opt); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestFlagValueResult(t *testing.T) {
	s := &event.Serial{}
	buf := []byte("payload")
	shared := func(p any) bool { b := p.([]byte); return &b[0] == &buf[0] }

	f := event.NewFuture[any](s)
	if !f.Flags().Has(event.ValueResult) {
		t.Fatal("futures must carry ValueResult")
	}
	var got []any
	for range 2 {
		event.Subscribe(f, func(_ event.Event, r any, _ error) { got = append(got, r) })
	}
	f.Resolve(buf)
	if len(got) != 2 || shared(got[0]) || shared(got[1]) {
		t.Fatalf("with ValueResult a []byte result must be a copy: got %v", got)
	}
	if diff := cmp.Diff([]any{buf, buf}, got); diff != "" {
		t.Errorf("copied results (-want +got):\n%s", diff)
	}

	p := newProbe(s, "bytes", true, 0)
	var seen any
	event.Subscribe(p, func(_ event.Event, r any, _ error) { seen = r })
	p.fire(buf, nil)
	if !shared(seen) {
		t.Error("without ValueResult the callback must see the event's own buffer")
	}
}

// TestFlagValueResultReplay: a late subscriber of a ValueResult event gets a
// value it may keep, like the subscribers of the live notification; what one
// replayed callback does to its bytes must not change what the next sees.
func TestFlagValueResultReplay(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	f.Resolve([]byte("payload"))
	var got []string
	for range 2 {
		cb := event.NewCallback(func(_ event.Event, r any, _ error) {
			b := r.([]byte)
			got = append(got, string(b))
			b[0] = 'X' // the callback owns its copy
		})
		if err := f.Replay(cb); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"payload", "payload"}, got); diff != "" {
		t.Errorf("replayed []byte results are shared, not copied (-want +got):\n%s", diff)
	}
}

func TestFlagGoOwned(t *testing.T) {
	s := &event.Serial{}
	if !event.NewFuture[any](s).Flags().Has(event.GoOwned) {
		t.Error("futures must carry GoOwned")
	}
	if newProbe(s, "c", true, 0).Flags().Has(event.GoOwned) {
		t.Error("GoOwned set on a kind that did not ask for it")
	}
}

func TestFlagNoFreeMemory(t *testing.T) {
	s := &event.Serial{}
	for _, tc := range []struct {
		flags event.Flags
		want  []bool
	}{{0, []bool{true}}, {event.NoFreeMemory, []bool{false}}} {
		ev := newProbe(s, "free", true, tc.flags)
		ev.Dispose()
		if diff := cmp.Diff(tc.want, ev.frees); diff != "" {
			t.Errorf("flags %v: Free calls (-want +got):\n%s", tc.flags, diff)
		}
		if !ev.Flags().Has(event.Closed) {
			t.Errorf("flags %v: the last Dispose did not close", tc.flags)
		}
	}
}

func TestFlagErrorHandled(t *testing.T) {
	var reps []report
	s := reportingSerial(&reps)
	boom := errors.New("boom")
	f := event.NewFuture[any](s)
	f.MarkErrorHandled()
	if !f.Flags().Has(event.ErrorHandled) {
		t.Fatal("MarkErrorHandled did not set ErrorHandled")
	}
	f.Reject(boom)
	outs, err := event.Await(t.Context(), event.Any(), f)
	if err != nil {
		t.Fatalf("Await = %v, want the outcome without the error", err)
	}
	if len(outs) != 1 || outs[0].Err != nil || outs[0].Index != 0 {
		t.Fatalf("outcomes = %+v, want one without error", outs)
	}

	g := event.NewFuture[any](s)
	g.MarkErrorHandled()
	g.Reject(boom) // nobody ever listens
	g.Dispose()
	p := newProbe(s, "handled", true, event.ErrorHandled)
	p.fire(nil, boom)
	if len(reps) != 0 {
		t.Errorf("handled errors were reported: %+v", reps)
	}
}

// refEvent is an event reference for the test: it stands for target.
type refEvent struct {
	event.Base
	owner  event.Owner
	target event.Event
}

type refOps refEvent

func (o *refOps) Owner() event.Owner { return o.owner }
func (o *refOps) Event() event.Event { return (*refEvent)(o) }
func (o *refOps) Arm() error         { return nil }
func (o *refOps) Disarm()            {}
func (o *refOps) Free(bool)          {}
func (o *refOps) Describe() string   { return "Ref(" + o.target.Info() + ")" }

func (r *refEvent) Target() event.Event { return r.target }

func newRef(o event.Owner, target event.Event, flags event.Flags) *refEvent {
	r := &refEvent{owner: o, target: target}
	eventkind.Init(&r.Base, (*refOps)(r), false, flags)
	return r
}

func TestFlagReference(t *testing.T) {
	s := &event.Serial{}
	f := event.NewFuture[any](s)
	ref := newRef(s, f, event.Reference)
	if !ref.Flags().Has(event.Reference) {
		t.Fatal("Reference flag from Init lost")
	}
	if got := event.Deref(ref); got != event.Event(f) {
		t.Errorf("Resolve(ref) = %v, want the future", got.Info())
	}
	if got := event.Deref(f); got != event.Event(f) {
		t.Error("Resolve of a plain event must return it")
	}
	notRef := newRef(s, f, 0) // has Target but no Reference flag
	if got := event.Deref(notRef); got != event.Event(notRef) {
		t.Error("Resolve followed an object without the Reference flag")
	}
	f.Resolve("through")
	outs, err := event.Await(t.Context(), event.All(), ref)
	if err != nil || len(outs) != 1 {
		t.Fatalf("Await(ref) = %+v, %v", outs, err)
	}
	// Await waits on the event behind the reference, and reports it under
	// the reference it was given.
	if outs[0].Event != event.Event(ref) || outs[0].Result != "through" {
		t.Errorf("Await(ref) outcome = %+v, want the future's result under ref", outs[0])
	}
}

func TestFlagObjectRef(t *testing.T) {
	s := &event.Serial{}
	ev := newProbe(s, "obj", true, 0)
	if ev.Flags().Has(event.ObjectRef) || ev.Object() != nil {
		t.Fatal("a new event carries an object")
	}
	owner := &struct{ name string }{"owner"}
	if err := ev.SetObject(owner); err != nil {
		t.Fatal(err)
	}
	if !ev.Flags().Has(event.ObjectRef) {
		t.Error("SetObject did not set ObjectRef")
	}
	if got := ev.Object(); got != any(owner) {
		t.Errorf("Object() = %v, want the owner", got)
	}
}

func TestFlagCloseFD(t *testing.T) {
	s := &event.Serial{}
	for _, closeOnClose := range []bool{true, false} {
		var fds [2]int
		if err := unix.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
		ev := newProbe(s, "fd", true, 0)
		s.Call(func() { eventkind.AttachFD(&ev.Base, fds[0], closeOnClose) })
		if got := ev.Flags().Has(event.CloseFD); got != closeOnClose {
			t.Errorf("CloseFD = %v after AttachFD(…, %v)", got, closeOnClose)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fds[0], &st); err != nil {
			t.Fatalf("fd not open before Close: %v", err)
		}
		ev.Close()
		err := unix.Fstat(fds[0], &st)
		if closeOnClose && !errors.Is(err, unix.EBADF) {
			t.Errorf("CloseFD: Fstat after Close = %v, want EBADF", err)
		}
		if !closeOnClose {
			if err != nil {
				t.Errorf("without CloseFD the fd was closed: %v", err)
			}
			unix.Close(fds[0])
		}
		unix.Close(fds[1])
	}
}

func TestFlagHidden(t *testing.T) {
	s := &event.Serial{}
	hidden := newProbe(s, "hidden", true, event.Hidden)
	if err := hidden.Start(); err != nil {
		t.Fatal(err)
	}
	if got := s.Active(); got != 0 {
		t.Errorf("a started hidden event counts: Active = %d", got)
	}
	if event.StateOf(hidden) != event.Active {
		t.Errorf("hidden event state = %v, want active", event.StateOf(hidden))
	}

	ev := newProbe(s, "shown", true, 0)
	ev.Start()
	var counts []int
	counts = append(counts, s.Active())
	ev.SetHidden(true)
	counts = append(counts, s.Active())
	ev.SetHidden(true) // no change
	counts = append(counts, s.Active())
	ev.SetHidden(false)
	counts = append(counts, s.Active())
	hidden.SetHidden(false) // an active hidden event joins the count
	counts = append(counts, s.Active())
	ev.Stop()
	hidden.Close()
	counts = append(counts, s.Active())
	idle := newProbe(s, "idle", true, 0)
	idle.SetHidden(true) // not active: nothing to move
	idle.SetHidden(false)
	counts = append(counts, s.Active())
	if diff := cmp.Diff([]int{1, 0, 0, 1, 2, 0, 0}, counts); diff != "" {
		t.Errorf("Active() along the way (-want +got):\n%s", diff)
	}
}
