package event_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
)

func TestCallbackSharedByEvents(t *testing.T) {
	s := &event.Serial{}
	evs := []*probe{newProbe(s, "1", true, 0), newProbe(s, "2", true, 0), newProbe(s, "3", false, 0)}
	disposed := 0
	cb := event.NewCallback(func(event.Event, any, error) {}).OnDispose(func() { disposed++ })
	for _, ev := range evs {
		if err := ev.AddCallback(cb); err != nil {
			t.Fatal(err)
		}
	}
	cb.Release() // the creator lets go
	var refs []int
	refs = append(refs, cb.Refs())
	evs[0].Close()
	refs = append(refs, cb.Refs())
	evs[1].DelCallback(cb)
	refs = append(refs, cb.Refs())
	if disposed != 0 {
		t.Fatalf("disposed while an event still holds the callback")
	}
	evs[2].Dispose()
	refs = append(refs, cb.Refs())
	if diff := cmp.Diff([]int{3, 2, 1, 0}, refs); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
	if disposed != 1 {
		t.Errorf("dispose ran %d times, want once", disposed)
	}
}

func TestSubscribeClosed(t *testing.T) {
	s := &event.Serial{}
	p := newProbe(s, "shut", true, 0)
	p.Close()
	cb, err := event.Subscribe(p, func(event.Event, any, error) {})
	if !errors.Is(err, event.ErrClosed) || cb.Refs() != 0 {
		t.Errorf("Subscribe on a closed event = %v with %d refs, want ErrClosed and a released callback", err, cb.Refs())
	}
}

// A panicking OnDispose is reported to the event's owner when the event
// releases the callback, never raised out of Close.
func TestPanickingOnDisposeIsReported(t *testing.T) {
	var reports []string
	s := &event.Serial{ReportFunc: func(_ event.Event, msg string, _ error) { reports = append(reports, msg) }}
	f := event.NewFuture[int](s)
	cb := event.NewCallback(func(event.Event, any, error) {}).OnDispose(func() { panic("dispose boom") })
	if err := f.AddCallback(cb); err != nil {
		t.Fatal(err)
	}
	cb.Release() // the event holds the last reference now
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if len(reports) != 1 || reports[0] != "callback's OnDispose panicked" {
		t.Fatalf("reports = %q, want the OnDispose panic", reports)
	}
}
