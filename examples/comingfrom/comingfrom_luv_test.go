package comingfrom_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestLuv runs the rows and the code block of "From luv (Lua)".
func TestLuv(t *testing.T) {
	row(t, "timer start", func(t *testing.T, r *reactor.Reactor) {
		tm, _ := r.NewTimer(5*time.Millisecond, 0)
		fired := 0
		tm.OnFire(func(err error) { fired++ })
		tm.Start()
		run(t, r)
		if fired != 1 {
			t.Fatalf("fired %d times, want once", fired)
		}
	})
	row(t, "timer stop, again, get_due_in", func(t *testing.T, r *reactor.Reactor) {
		tm, _ := r.NewTimer(time.Hour, time.Hour)
		must(t, tm.Start())
		if d := tm.DueIn(); d <= 0 || d > time.Hour+time.Second {
			t.Fatalf("DueIn of a started timer = %v, want in (0, 1h]", d)
		}
		must(t, tm.Stop())
		if d := tm.DueIn(); d != 0 {
			t.Fatalf("DueIn of a stopped timer = %v, want 0", d)
		}
		must(t, tm.Again()) // starts it again, with its repeat
		if d := tm.DueIn(); d <= 0 {
			t.Fatalf("DueIn after Again = %v, want > 0", d)
		}
		must(t, tm.Stop())
		once, _ := r.NewTimer(time.Hour, 0)
		once.Start()
		if err := once.Again(); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("Again on a one-shot timer = %v, want EINVAL", err)
		}
		once.Close()
	})
	row(t, "timer start again", func(t *testing.T, r *reactor.Reactor) {
		tm, _ := r.NewTimer(time.Millisecond, 0)
		fired := 0
		tm.OnFire(func(error) { fired++ })
		must(t, tm.Start())
		run(t, r)
		must(t, tm.Start())
		run(t, r)
		must(t, tm.Refresh())
		run(t, r)
		if fired != 3 {
			t.Fatalf("a one-shot timer started again fired %d times, want 3", fired)
		}
		tm.Close()
	})
	row(t, "close", func(t *testing.T, r *reactor.Reactor) {
		tm, _ := r.NewTimer(time.Hour, 0)
		must(t, tm.Start())
		must(t, tm.Close())
		run(t, r) // the closed timer no longer keeps it going
		if err := tm.Start(); !errors.Is(err, event.ErrClosed) {
			t.Fatalf("Start after Close = %v, want ErrClosed", err)
		}
	})
	row(t, "ref, unref, loop_alive", func(t *testing.T, r *reactor.Reactor) {
		run(t, r)
		tm, _ := r.NewTimer(time.Hour, 0)
		must(t, tm.Start())
		if !r.Alive() {
			t.Fatal("not Alive with a started timer")
		}
		must(t, tm.SetHidden(true))
		if r.Alive() {
			t.Fatal("Alive with a hidden timer only")
		}
		must(t, tm.SetHidden(false))
		if !r.Alive() {
			t.Fatal("not Alive after SetHidden(false)")
		}
		tm.Close()
	})
	row(t, "run modes", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		tm, _ := r.NewTimer(time.Hour, 0)
		must(t, tm.Start())
		must(t, r.RunNoWait(ctx)) // nothing due: returns at once
		short, _ := r.NewTimer(time.Millisecond, 0)
		fired := false
		short.OnFire(func(error) { fired = true })
		short.Start()
		for !fired {
			must(t, r.RunOnce(ctx))
		}
		stop, _ := r.NewTimer(0, 0)
		stop.OnFire(func(error) { r.Stop() })
		stop.Start()
		must(t, r.Run(ctx)) // returns at Stop, the hour-long timer still started
		if !r.Alive() {
			t.Fatal("not Alive after Stop with a started timer")
		}
		// Serve runs, idle or not, until Stop.
		tm.Close()
		go r.Stop()
		if err := r.Serve(ctx); err != nil {
			t.Fatalf("Serve = %v, want nil at Stop", err)
		}
		tm.Close()
	})
	row(t, "now, update_time", func(t *testing.T, r *reactor.Reactor) {
		before := r.Now()
		r.UpdateTime()
		if after := r.Now(); after < before {
			t.Fatalf("Now went back: %v then %v", before, after)
		}
	})
	row(t, "new_poll", func(t *testing.T, r *reactor.Reactor) {
		fd, peer := socketPair(t, true)
		p, err := uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{})
		must(t, err)
		defer p.Close()
		var got uv.PollEvents
		p.OnReady(func(ev uv.PollEvents, err error) { got = ev; p.Stop() })
		must(t, p.Start())
		peer.Write([]byte("x"))
		run(t, r)
		if got&uv.Readable == 0 {
			t.Fatalf("poll said %v, want Readable", got)
		}
		// Several users of one fd: a proxy each over one (unstarted) poll.
		fd, peer = socketPair(t, true)
		shared, err := uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{})
		must(t, err)
		defer shared.Close()
		var ready [2]uv.PollEvents
		for i := range ready {
			x, err := uv.NewPollProxy(shared, uv.Readable)
			must(t, err)
			defer x.Close()
			x.OnReady(func(ev uv.PollEvents, err error) { ready[i] = ev; x.Stop() })
			must(t, x.Start())
		}
		peer.Write([]byte("x"))
		run(t, r)
		if ready[0]&uv.Readable == 0 || ready[1]&uv.Readable == 0 {
			t.Fatalf("proxies said %v, want Readable for both", ready)
		}
	})
	row(t, "new_signal", func(t *testing.T, r *reactor.Reactor) {
		signalSays(t, r, func() { run(t, r) }, syscall.SIGINT, syscall.SIGINT)
	})
	row(t, "new_async", func(t *testing.T, r *reactor.Reactor) {
		tr, err := uv.NewTrigger(r)
		must(t, err)
		woke := false
		event.On(tr, func(struct{}, error) { woke = true; tr.Close() })
		must(t, tr.Start())
		go tr.Send() // from any goroutine
		run(t, r)
		if !woke {
			t.Fatal("the trigger did not notify")
		}
	})
	row(t, "spawn", func(t *testing.T, r *reactor.Reactor) {
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sh", "-c", "exit 5"}})
		must(t, err)
		status, err := coRun(t, r, func(ctx context.Context) (int, error) { return p.Await(ctx) })
		if status != 5 || err != nil {
			t.Fatalf("exit = %d, %v; want 5", status, err)
		}
	})
	row(t, "new_fs_event", func(t *testing.T, r *reactor.Reactor) {
		dir := t.TempDir()
		w, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
		must(t, err)
		var got string
		w.OnChange(func(ch uv.FSEventResult, err error) { got = ch.Name; w.Close() })
		must(t, w.Start())
		must(t, os.WriteFile(filepath.Join(dir, "g"), nil, 0o600))
		run(t, r)
		if got != "g" {
			t.Fatalf("change of %q, want g", got)
		}
	})
	row(t, "getaddrinfo", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		a, err := uv.NewAddrInfo(r, "127.0.0.1", "80", uv.AddrInfoHints{Network: "tcp4", Context: ctx})
		must(t, err)
		addrs, err := coRun(t, r, func(ctx context.Context) ([]netip.AddrPort, error) { return a.Await(ctx) })
		if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddrPort("127.0.0.1:80") {
			t.Fatalf("addresses %v, %v; want 127.0.0.1:80", addrs, err)
		}
	})
	row(t, "queue_work", func(t *testing.T, r *reactor.Reactor) {
		task, err := uv.QueueTask(r, func(context.Context) (string, error) { return "done", nil })
		must(t, err)
		v, err := coRun(t, r, func(ctx context.Context) (string, error) { return task.Await(ctx) })
		if v != "done" || err != nil {
			t.Fatalf("task = %q, %v; want done", v, err)
		}
	})
	row(t, "prepare, check, idle", func(t *testing.T, r *reactor.Reactor) {
		prep, err := uv.NewPrepare(r)
		must(t, err)
		check, err := uv.NewCheck(r)
		must(t, err)
		idle, err := uv.NewIdle(r)
		must(t, err)
		var n [3]int
		event.On(prep, func(struct{}, error) { n[0]++ })
		event.On(check, func(struct{}, error) { n[1]++ })
		event.On(idle, func(struct{}, error) {
			if n[2]++; n[2] == 3 {
				prep.Close()
				check.Close()
				idle.Close()
			}
		})
		must(t, prep.Start())
		must(t, check.Start())
		must(t, idle.Start())
		run(t, r)
		if n[0] < 2 || n[1] < 2 || n[2] != 3 {
			t.Fatalf("prepare ran %d times, check %d, idle %d; want at least 2, 2, and 3", n[0], n[1], n[2])
		}
	})
	row(t, "coroutines", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		state := 0 // loop-owned: the cooperative coroutine touches it without a lock
		co, _ := reactor.Spawn(ctx, r, func(ctx context.Context) (int, error) {
			tm, _ := r.NewTimer(time.Millisecond, 0)
			if _, err := event.Await(ctx, event.Any(), tm); err != nil {
				return 0, err
			}
			state++
			return state, nil
		})
		par, _ := reactor.Go(ctx, r, func(ctx context.Context) (int, error) { return 2, nil })
		run(t, r)
		a, _, errA := co.Outcome()
		b, _, errB := par.Outcome()
		if a != 1 || b != 2 || errA != nil || errB != nil {
			t.Fatalf("Spawn gave %d, %v; Go %d, %v; want 1 and 2", a, errA, b, errB)
		}
	})
	row(t, "code block", func(t *testing.T, r *reactor.Reactor) {
		ctx := bounded(t)
		t2, _ := r.NewTimer(time.Millisecond, time.Millisecond)
		n := 0
		event.Subscribe(t2, func(ev event.Event, _ any, _ error) {
			n++
			if n == 3 {
				ev.Close() // luv: timer:close() inside the callback
			}
		})
		t2.Start()
		r.Run(ctx)
		if n != 3 {
			t.Fatalf("the callback ran %d times, want 3", n)
		}
	})
}
