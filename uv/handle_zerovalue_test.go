package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// callBounded runs fn in a goroutine and reports a panic or a hang as an error.
func callBounded(fn func()) (err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		fn()
		done <- nil
	}()
	select {
	case err = <-done:
		return err
	case <-time.After(3 * time.Second):
		return errors.New("hang: no return within 3s")
	}
}

func TestZeroReactorIsRefused(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(r *reactor.Reactor){
		"Run":      func(r *reactor.Reactor) { _ = r.Run(ctx) },
		"RunOnce":  func(r *reactor.Reactor) { _ = r.RunOnce(ctx) },
		"Call":     func(r *reactor.Reactor) { _ = r.Call(func() {}) },
		"Post":     func(r *reactor.Reactor) { _ = r.Post(func() {}) },
		"Close":    func(r *reactor.Reactor) { _ = r.Close() },
		"Stats":    func(r *reactor.Reactor) { _ = r.Stats() },
		"Now":      func(r *reactor.Reactor) { _ = r.Now() },
		"Alive":    func(r *reactor.Reactor) { _ = r.Alive() },
		"Stop":     func(r *reactor.Reactor) { r.Stop() },
		"Hold":     func(r *reactor.Reactor) { _, _ = r.Hold() },
		"NewTimer": func(r *reactor.Reactor) { _, _ = r.NewTimer(time.Millisecond, 0) },
		"Trigger":  func(r *reactor.Reactor) { _, _ = uv.NewTrigger(r) },
		"Signal":   func(r *reactor.Reactor) { _, _ = uv.NewSignal(r, 10) },
	}
	for name, fn := range cases {
		// A fresh zero value per case: one failure must not hide the next.
		if err := callBounded(func() { fn(&reactor.Reactor{}) }); err != nil {
			t.Errorf("zero reactor.Reactor: %s: %v", name, err)
		}
	}
}
func TestNilReactorIsRefused(t *testing.T) {
	var r *reactor.Reactor
	cases := map[string]func() error{
		"NewTrigger": func() error { _, err := uv.NewTrigger(r); return err },
		"NewTimer":   func() error { _, err := r.NewTimer(time.Millisecond, 0); return err },
		"NewSignal":  func() error { _, err := uv.NewSignal(r, 10); return err },
		"NewIdle":    func() error { _, err := uv.NewIdle(r); return err },
		"Spawn": func() error {
			_, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/true"}})
			return err
		},
		"NewCommand": func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{}); return err },
		"QueueTask": func() error {
			_, err := uv.QueueTask(r, func(context.Context) (any, error) { return nil, nil })
			return err
		},
		"NewThread": func() error {
			_, err := uv.NewThread(r, func(context.Context) (any, error) { return nil, nil })
			return err
		},
		"rSpawn": func() error {
			_, err := reactor.Spawn(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
		"rGo": func() error {
			_, err := reactor.Go(context.Background(), r, func(context.Context) (int, error) { return 0, nil })
			return err
		},
		"NewFuture": func() error { f := event.NewFuture[int](r.Owner()); return f.Start() },
	}
	for name, fn := range cases {
		var got error
		if err := callBounded(func() { got = fn() }); err != nil {
			t.Errorf("nil reactor: %s: %v", name, err)
			continue
		}
		if got == nil {
			t.Errorf("nil reactor: %s returned nil error", name)
		}
	}
}

func TestZeroValueEventsAreRefused(t *testing.T) {
	cases := map[string]func(){
		"Trigger.Send":    func() { var tr uv.Trigger; _ = tr.Send() },
		"Trigger.Start":   func() { var tr uv.Trigger; _ = tr.Start() },
		"Trigger.Close":   func() { var tr uv.Trigger; _ = tr.Close() },
		"Trigger.Dispose": func() { var tr uv.Trigger; tr.Dispose() },
		"Trigger.Info":    func() { var tr uv.Trigger; _ = tr.Info() },
		"Poll.Flags":      func() { var p uv.Poll; _ = p.Flags() },
		"Poll.Target":     func() { var p uv.Poll; _ = p.Target() },
		"Poll.AddCallback": func() {
			var p uv.Poll
			_ = p.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
		},
		"Timer.Start":   func() { var tm reactor.Timer; _ = tm.Start() },
		"Timer.Reset":   func() { var tm reactor.Timer; _ = tm.Reset(time.Second) },
		"Timer.Close":   func() { var tm reactor.Timer; _ = tm.Close() },
		"Signal.Start":  func() { var s uv.Signal; _ = s.Start() },
		"Process.Close": func() { var p uv.Process; _ = p.Close() },
		"Task.Start":    func() { var tk uv.Task[any]; _ = tk.Start() },
		"Phase.Start":   func() { var p uv.Phase; _ = p.Start() },
		"Await zero Trigger": func() {
			var tr uv.Trigger
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, _ = event.Await(ctx, event.Any(), &tr)
		},
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			if err := callBounded(fn); err != nil {
				t.Errorf("zero value: %s: %v", name, err)
			}
		})
	}
}

// A zero Process has pid 0, and kill(2) with pid 0 signals the caller's
// whole process group: Kill on it must refuse, not signal this process (and
// its parent, go test, and every sibling in the group). SIGWINCH is ignored
// by default, so the probe harms nobody; SIGKILL here would kill the group.
func TestZeroProcessKillDoesNotSignalOwnGroup(t *testing.T) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	defer signal.Stop(ch)
	var p uv.Process
	var err error
	if perr := callBounded(func() { err = p.Kill(syscall.SIGWINCH) }); perr != nil {
		t.Fatalf("zero Process.Kill: %v", perr)
	}
	select {
	case <-ch:
		t.Errorf("zero Process.Kill(SIGWINCH) (err=%v) signalled this process's own group (kill(0, sig))", err)
	case <-time.After(200 * time.Millisecond):
		// Not a timing decision about the code under test: a signal sent by
		// kill(2) to our own group is pending before kill returns, and the
		// relay goroutine needs only to be scheduled.
	}
	if err == nil {
		t.Errorf("zero Process.Kill returned nil, want an error")
	}
}
