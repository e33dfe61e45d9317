package event_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/refcount"
)

// released is what a misuse report must say: ErrReleased, which matches
// refcount.ErrMisuse, naming the test's line.
func checkReleasedErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, event.ErrReleased) || !errors.Is(err, refcount.ErrMisuse) {
		t.Errorf("%s: %v, want ErrReleased (refcount.ErrMisuse)", what, err)
	}
	if err != nil && !strings.Contains(err.Error(), "base_retain_released_test.go:") {
		t.Errorf("%s: %v does not name the line that misused the count", what, err)
	}
}

// Retain on an event whose references are all gone (its last Dispose ran)
// does nothing and is reported to the event's owner; it never panics, and
// a Dispose after it stays a no-op.
func TestRetainAfterLastDisposeReported(t *testing.T) {
	type report struct {
		Msg string
		Err error
	}
	var reports []report
	s := &event.Serial{ReportFunc: func(_ event.Event, msg string, err error) { reports = append(reports, report{msg, err}) }}
	f := event.NewFuture[int](s)
	f.Dispose() // the creator's reference, the last: the future is closed
	if !f.Flags().Has(event.Closed) {
		t.Fatalf("flags after the last Dispose = %v, want Closed", f.Flags())
	}
	f.Retain()
	f.Dispose()
	if len(reports) != 1 {
		t.Fatalf("reports = %v, want one for the Retain", reports)
	}
	if diff := cmp.Diff("Retain after the event's last Dispose", reports[0].Msg); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	checkReleasedErr(t, "the Retain's report", reports[0].Err)
	if n := f.Flags() & event.Closed; n == 0 {
		t.Errorf("flags after a refused Retain = %v, want still Closed", f.Flags())
	}
}

// The same for a callback: Retain or Release after its last Release, and a
// subscription of a released callback, are refused without a panic (logged
// through slog, a callback having no owner; AddCallback returns the error).
func TestCallbackUsedAfterLastRelease(t *testing.T) {
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))

	disposed := 0
	cb := event.NewCallback(func(event.Event, any, error) {}).OnDispose(func() { disposed++ })
	cb.Release() // the creator's, the last
	cb.Retain()
	cb.Release()
	if disposed != 1 {
		t.Errorf("OnDispose ran %d times, want once", disposed)
	}
	if n := strings.Count(log.String(), "ErrMisuse") + strings.Count(log.String(), "after its last release"); n < 2 {
		t.Errorf("log = %q, want the Retain and the Release after the last release reported", log.String())
	}
	if !strings.Contains(log.String(), "base_retain_released_test.go:") {
		t.Errorf("log = %q, want the misusing line named", log.String())
	}

	s := &event.Serial{}
	f := event.NewFuture[int](s)
	defer f.Close()
	err := f.AddCallback(cb)
	checkReleasedErr(t, "AddCallback of a released callback", err)
}

// A callback released once too often by its creator while an event holds
// it: the event's own release at Close finds the count gone; it is
// reported to the owner, never a panic out of Close.
func TestCallbackOverReleasedWhileSubscribed(t *testing.T) {
	var msgs []string
	var errs []error
	s := &event.Serial{ReportFunc: func(_ event.Event, msg string, err error) {
		msgs = append(msgs, msg)
		errs = append(errs, err)
	}}
	f := event.NewFuture[int](s)
	cb := event.NewCallback(func(event.Event, any, error) {})
	if err := f.AddCallback(cb); err != nil {
		t.Fatal(err)
	}
	cb.Release()
	cb.Release() // one more than the creator held: the event's reference goes
	if err := f.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if len(msgs) != 1 {
		t.Fatalf("reports = %q, want one for the event's release of the over-released callback", msgs)
	}
	if !errors.Is(errs[0], event.ErrReleased) {
		t.Errorf("report %q: %v, want ErrReleased", msgs[0], errs[0])
	}
}
