package reactor_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// jsonRecords decodes the records a JSON slog handler wrote.
func jsonRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not a JSON record: %v: %s", err, line)
		}
		recs = append(recs, m)
	}
	return recs
}

// A panicking callback's report is one structured record: the event's
// kind and Info, the error and the stack, as attributes.
func TestPanicReportIsStructured(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		var out syncBuffer
		r, err := reactor.New(reactor.Options{Driver: d, Logger: slog.New(slog.NewJSONHandler(&out, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		tm, _ := r.NewTimer(time.Millisecond, 0)
		tm.OnFire(func(error) { panic("in a callback") })
		tm.Start()
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		recs := jsonRecords(t, out.String())
		if len(recs) != 1 {
			t.Fatalf("records = %v, want one", recs)
		}
		rec := recs[0]
		got := map[string]any{"level": rec["level"], "msg": rec["msg"], "kind": rec["kind"], "err": rec["err"]}
		want := map[string]any{"level": "ERROR", "msg": "uvevent: callback panicked", "kind": "Timer", "err": "panic: in a callback"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
		if info, _ := rec["event"].(string); !strings.HasPrefix(info, "Timer(") {
			t.Errorf("event = %q, want the timer's Info", info)
		}
		if stack, _ := rec["stack"].(string); !strings.Contains(stack, "TestPanicReportIsStructured") {
			t.Errorf("stack does not show the panicking callback:\n%s", stack)
		}
	})
}

// A deadlock report logged without OnReport is one structured record: how
// many wait, and per waiter its Info, where it waits, and the Info and kind
// of each event it waits on.
func TestDeadlockReportIsStructured(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		var out syncBuffer
		r, err := reactor.New(reactor.Options{Driver: d, Logger: slog.New(slog.NewJSONHandler(&out, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ctx := context.Background()
		f := event.NewFuture[int](r)
		co, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) { return f.Await(ctx) })
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		co.Outcome() // the deadlock error is the program's: it is read
		var dl map[string]any
		for _, rec := range jsonRecords(t, out.String()) {
			if rec["msg"] == "uvevent: deadlock" {
				dl, _ = rec["deadlock"].(map[string]any)
			}
		}
		if dl == nil {
			t.Fatalf("no structured deadlock record in:\n%s", out.String())
		}
		w0, _ := dl["0"].(map[string]any)
		got := map[string]any{"waiters": dl["waiters"], "kinds": w0["kinds"]}
		want := map[string]any{"waiters": float64(1), "kinds": []any{"Future"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("deadlock record (-want +got):\n%s", diff)
		}
		if c, _ := w0["coroutine"].(string); !strings.HasPrefix(c, "Coroutine") {
			t.Errorf("waiter's coroutine = %q, want its Info", c)
		}
		if where, _ := w0["where"].(string); !strings.Contains(where, "reactor_report_slog_test.go") {
			t.Errorf("waiter's where = %q, want the line of the test", where)
		}
	})
}
