package reactor_test

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io/fs"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

var publishRuns atomic.Int64

// Publish serves Stats through expvar, read afresh at each request, also
// after Close; a taken or empty name is refused, not a panic.
func TestPublishServesStats(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r, err := reactor.New(reactor.Options{Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// expvar names are the process's for good: a run of its own for
		// each -count.
		name := fmt.Sprintf("uvevent-test-%s-%d", t.Name(), publishRuns.Add(1))
		if err := r.Publish(name); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		read := func() reactor.Stats {
			t.Helper()
			var s reactor.Stats
			if err := json.Unmarshal([]byte(expvar.Get(name).String()), &s); err != nil {
				t.Fatalf("the published value is not the Stats' JSON: %v", err)
			}
			return s
		}
		tm, _ := r.NewTimer(time.Hour, 0)
		tm.Start()
		if s := read(); s.Active != 1 || s.Timers != 1 {
			t.Errorf("published with a timer started: Active=%d Timers=%d, want 1 and 1", s.Active, s.Timers)
		}
		tm.Close()
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := read(); s.Active != 0 || s.Iterations == 0 {
			t.Errorf("published after a turn: Active=%d Iterations=%d, want 0 and some", s.Active, s.Iterations)
		}
		if err := r.Publish(name); !errors.Is(err, syscall.EEXIST) || !errors.Is(err, fs.ErrExist) {
			t.Errorf("Publish of a taken name = %v, want EEXIST", err)
		}
		if err := r.Publish(""); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Publish(\"\") = %v, want EINVAL", err)
		}
		r.Close()
		if s := read(); s.Running || s.Iterations == 0 {
			t.Errorf("published after Close: %+v, want the last figures", s)
		}
	})
}
