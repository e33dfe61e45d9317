package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// tourSystem: a shell command as an event (its result stored and
// replayed), and a file watch that sees a file appear and change, side by
// side in one Run.
func tourSystem(ctx context.Context, r *reactor.Reactor) error {
	ex, err := uv.NewCommand(r, "echo hello from a child; echo its pid is $$; exit 3", uv.CommandOptions{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	say("started %s", ex.Info())
	event.Subscribe(ex, func(ev event.Event, res any, err error) {
		if res, ok := res.(*uv.CommandResult); ok {
			say("the child ended: exit code %d, lines %q", res.ExitCode, res.Lines[:1])
		} else {
			say("the child: %v", err)
		}
	})

	dir, err := os.MkdirTemp("", "uvevent-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
	switch {
	case err != nil:
		return err
	default:
		stopWatch, _ := r.NewTimer(2*time.Second, 0) // bounds the watch
		event.Subscribe(stopWatch, func(event.Event, any, error) { w.Close() })
		stopWatch.Start()
		event.Subscribe(w, func(ev event.Event, res any, err error) {
			if err != nil {
				return
			}
			fr := res.(uv.FSEventResult)
			say("watch: %s %v", fr.Name, fr.Events)
			if fr.Events&uv.Change != 0 {
				w.Close()
				stopWatch.Close()
			}
		})
		if err := w.Start(); err != nil {
			return err
		}
		say("watching %s (%s)", filepath.Base(dir), w.Info())
		go os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("written while watched\n"), 0o600)
	}
	if err := r.Run(ctx); err != nil {
		return err
	}
	outs, err := event.Await(ctx, event.All(), ex)
	if err != nil {
		return err
	}
	say("replayed to a late waiter: %s, last line %q", ex.Info(), outs[0].Result.(*uv.CommandResult).Last)
	return nil
}
