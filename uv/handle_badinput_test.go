package uv_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Bad input across the kinds, on both drivers: each call returns an error
// (no panic, no hang), and the reactor keeps running afterwards (a trigger
// still fires) with nothing left at Close.
func TestBadInputAcrossKinds(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		r := uv.UvtNewReactorOn(t, d).Reactor
		defer r.Close()
		closedTr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatal(err)
		}
		closedTr.Close()
		cases := map[string]func() error{
			"NewTimer negative timeout": func() error { _, err := r.NewTimer(-time.Second, 0); return err },
			"NewTimer negative repeat":  func() error { _, err := r.NewTimer(0, -time.Second); return err },
			"Timer.Reset negative": func() error {
				tm, err := r.NewTimer(time.Second, 0)
				if err != nil {
					return nil
				}
				defer tm.Close()
				return tm.Reset(-1)
			},
			"Timer.SetRepeat negative": func() error {
				tm, err := r.NewTimer(time.Second, 0)
				if err != nil {
					return nil
				}
				defer tm.Close()
				return tm.SetRepeat(-1)
			},
			"NewSignal 0":       func() error { _, err := uv.NewSignal(r, 0); return err },
			"NewSignal -1":      func() error { _, err := uv.NewSignal(r, -1); return err },
			"NewSignal 65":      func() error { _, err := uv.NewSignal(r, 65); return err },
			"NewSignal 1<<20":   func() error { _, err := uv.NewSignal(r, 1<<20); return err },
			"NewSignal SIGKILL": func() error { _, err := uv.NewSignal(r, syscall.SIGKILL); return err },
			"NewSignal SIGSTOP": func() error { _, err := uv.NewSignal(r, syscall.SIGSTOP); return err },
			"QueueTask nil":     func() error { _, err := uv.QueueTask[any](r, nil); return err },
			"NewThread nil":     func() error { _, err := uv.NewThread[any](r, nil); return err },
			"reactor.Go nil": func() error {
				_, err := reactor.Go[int](context.Background(), r, nil)
				return err
			},
			"reactor.Spawn nil": func() error {
				_, err := reactor.Spawn[int](context.Background(), r, nil)
				return err
			},
			"reactor.Go nil ctx": func() error {
				//lint:ignore SA1012 the nil context is the point of the case
				_, err := reactor.Go(nil, r, func(context.Context) (int, error) { return 0, nil })
				return err
			},
			"Spawn empty Args": func() error { _, err := uv.StartProcess(r, uv.ProcessOptions{}); return err },
			"Spawn bad Dir": func() error {
				_, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/true"}, Dir: "/nonexistent/dir"})
				return err
			},
			"NewCommand empty": func() error { _, err := uv.NewCommand(r, "", uv.CommandOptions{}); return err },
			"NewCommand bad shell": func() error {
				_, err := uv.NewCommand(r, "true", uv.CommandOptions{Shell: "/nonexistent/sh"})
				return err
			},
			"NewCommand neg timeout": func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{Timeout: -1}); return err },
			"NewCommand bad mode":    func() error { _, err := uv.NewCommand(r, "true", uv.CommandOptions{Mode: 200}); return err },
			"NewTaskPool 0":          func() error { _, err := uv.NewTaskPool(0); return err },
			"NewTaskPool negative":   func() error { _, err := uv.NewTaskPool(-3); return err },
			"AddCallback nil":        func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.AddCallback(nil) },
			"DelCallback nil":        func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.DelCallback(nil) },
			"Replay nil":             func() error { tr, _ := uv.NewTrigger(r); defer tr.Close(); return tr.Replay(nil) },
			"NewCallback nil fn": func() error {
				tr, _ := uv.NewTrigger(r)
				defer tr.Close()
				if err := tr.AddCallback(event.NewCallback(nil)); err != nil {
					return err
				}
				tr.Start()
				tr.Send()
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				r.RunOnce(ctx)
				return errors.New("accepted (delivered without panic)")
			},
			"Send closed":  func() error { return closedTr.Send() },
			"Start closed": func() error { return closedTr.Start() },
			"AddCallback closed": func() error {
				return closedTr.AddCallback(event.NewCallback(func(event.Event, any, error) {}))
			},
			"LookupProcess 0":  func() error { _, err := uv.LookupProcess(r, 0); return err },
			"LookupProcess -1": func() error { _, err := uv.LookupProcess(r, -1); return err },
			"LookupProcess self": func() error {
				_, err := uv.LookupProcess(r, syscall.Getpid())
				return err
			},
		}
		for name, fn := range cases {
			t.Run(name, func(t *testing.T) {
				var got error
				if perr := callBounded(func() { got = fn() }); perr != nil {
					t.Errorf("%s: %v", name, perr)
					return
				}
				if got == nil {
					t.Errorf("%s: accepted (nil error), want an error", name)
				}
			})
		}
		// Still running: a trigger fires.
		tr, err := uv.NewTrigger(r)
		if err != nil {
			t.Fatalf("NewTrigger after bad input: %v", err)
		}
		fired := make(chan struct{}, 1)
		event.Subscribe(tr, func(_ event.Event, _ any, err error) {
			if err == nil {
				select {
				case fired <- struct{}{}:
				default:
				}
			}
		})
		tr.Start()
		tr.Send()
		ctx, cancel := context.WithTimeout(context.Background(), raceSafety)
		defer cancel()
		go r.Run(ctx)
		select {
		case <-fired:
		case <-time.After(raceSafety):
			t.Errorf("reactor no longer fires triggers after bad input")
		}
		tr.Close()
		if err := closeBounded(t, r); err != nil {
			t.Fatal(err)
		}
		if s := r.Stats(); s.CHandles != 0 {
			t.Errorf("CHandles=%d after Close", s.CHandles)
		}
	})
}
