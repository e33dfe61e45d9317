package uv_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// In one loop iteration libuv runs idle hooks, then prepare hooks before it
// polls, then check hooks after; an idle hook keeps the loop turning while
// started. Stopping hooks in a callback holds back their records of the same
// turn: the last iteration delivers the idle hook only.
func TestPhaseOrderAndIdle(t *testing.T) {
	uv.UvtEachDriver(t, testPhaseOrderAndIdle)
}

func testPhaseOrderAndIdle(t *testing.T, u *uv.UvtReactor) {
	var order []string
	prep, err := uv.NewPrepare(u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	check, _ := uv.NewCheck(u.Reactor)
	idle, _ := uv.NewIdle(u.Reactor)
	idleRuns := 0
	event.Subscribe(prep, func(event.Event, any, error) { order = append(order, "prepare") })
	event.Subscribe(check, func(event.Event, any, error) { order = append(order, "check") })
	event.Subscribe(idle, func(ev event.Event, _ any, _ error) {
		order = append(order, "idle")
		if idleRuns++; idleRuns == 3 {
			prep.Stop()
			check.Stop()
			ev.Stop()
		}
	})
	for _, ev := range []event.Event{prep, check, idle} {
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	if err := u.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if idleRuns != 3 {
		t.Fatalf("idle ran %d times, want 3", idleRuns)
	}
	want := []string{"idle", "prepare", "check", "idle", "prepare", "check", "idle"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Fatalf("hook order (-want +got):\n%s", diff)
	}
	if got := prep.Info(); got != "Prepare(runs=2)" {
		t.Fatalf("Info = %q", got)
	}
	for _, ev := range []*uv.Phase{prep, check, idle} {
		ev.Close()
	}
	uv.UvtShutdown(t, u, false)
}

// conformPhase is the row of the conformance table (conform_test.go)
// for the phase kind that mk makes, whose Info begins with name.
func conformPhase(name string, mk func(*reactor.Reactor) (*uv.Phase, error)) func(t *testing.T) conform.Kind {
	return func(t *testing.T) conform.Kind {
		return conform.Kind{
			Name: "phase",
			New:  func(r *reactor.Reactor) (event.Event, error) { return mk(r) },
			Info: regexp.MustCompile(`^` + name + `\(runs=\d+\)$`),
		}
	}
}

// A Phase counts in Stats().Handles from its creation to its close on both
// drivers alike, so that a leak check means the same on each, and the
// reactor's Close closes a Phase that was never started, as it closes
// every libuv handle.
func TestPhaseCountedAndClosedWithReactor(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		idle, err := uv.NewIdle(u.Reactor)
		uv.UvtMust(t, err)
		check, err := uv.NewCheck(u.Reactor)
		uv.UvtMust(t, err)
		uv.UvtMust(t, check.Start())
		if diff := cmp.Diff(map[string]int{"phase": 2}, u.Stats().Handles); diff != "" {
			t.Errorf("two phases, one started (-want +got):\n%s", diff)
		}
		uv.UvtMust(t, check.Close())
		uv.UvtMust(t, u.RunNoWait(context.Background())) // libuv's close callback
		if diff := cmp.Diff(map[string]int{"phase": 1}, u.Stats().Handles); diff != "" {
			t.Errorf("one phase closed (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
		if !idle.Flags().Has(event.Closed) {
			t.Errorf("a Phase never started is not closed by the reactor's Close: %s", idle.Info())
		}
	})
}
