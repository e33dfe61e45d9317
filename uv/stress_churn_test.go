//go:build stress

package uv_test

// The stress tests (make stress) are built with the stress tag so that the
// ordinary suite stays fast. STRESS_SHORT=1 or -short scales them down for
// CI.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// stressShort reports whether the short variant was asked for.
func stressShort() bool { return testing.Short() || os.Getenv("STRESS_SHORT") == "1" }

// stressScale is n, or n/10 in the short variant.
func stressScale(n int) int {
	if stressShort() {
		return max(1, n/10)
	}
	return n
}

// g1Kind is one row of G1 for every kind: how to make one event of the
// kind, and how many (a million where making one is cheap; fewer where
// each costs a descriptor, a thread-pool request or a child process).
type g1Kind struct {
	name   string
	n      int
	why    string // why fewer than a million
	batch  int
	create func(t *testing.T, r *reactor.Reactor, dir string) error
}

// g1Fd is a fresh descriptor a poll can own (closed with it): an eventfd.
func g1Fd() (int, error) { return unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK) }

var g1Kinds = []g1Kind{
	{name: "timer", n: 1_000_000, batch: 10_000, create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
		_, err := r.NewTimer(time.Hour, 0)
		return err
	}},
	{name: "trigger", n: 1_000_000, batch: 10_000, create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
		_, err := uv.NewTrigger(r)
		return err
	}},
	{name: "future", n: 1_000_000, batch: 10_000, create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
		event.NewFuture[int](r.Owner())
		return nil
	}},
	{name: "phase", n: 1_000_000, batch: 10_000, create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
		_, err := uv.NewCheck(r)
		return err
	}},
	{name: "signal", n: 1_000_000, batch: 10_000, create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
		_, err := uv.NewSignal(r, syscall.SIGUSR2)
		return err
	}},
	{name: "poll", n: 100_000, why: "each owns an eventfd until collected", batch: 1_000,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			fd, err := g1Fd()
			if err != nil {
				return err
			}
			_, err = uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{CloseFD: true})
			if err != nil {
				unix.Close(fd)
			}
			return err
		}},
	{name: "pipe", n: 50_000, why: "each pair is two sockets until collected", batch: 500,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, _, err := uv.Pipe(r)
			return err
		}},
	{name: "listener", n: 20_000, why: "each is a bound TCP socket until collected", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
			return err
		}},
	{name: "udp", n: 20_000, why: "each is a bound UDP socket until collected", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.ListenUDP(r, "udp4", "127.0.0.1:0")
			return err
		}},
	{name: "fsevent", n: 20_000, why: "each holds an inotify watch when started", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, dir string) error {
			_, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
			return err
		}},
	{name: "fspoll", n: 20_000, why: "each stats its path on the thread pool when started", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, dir string) error {
			_, err := uv.NewFSPoll(r, dir, time.Millisecond)
			return err
		}},
	{name: "fs-request", n: 20_000, why: "each is a thread-pool request (a stat, a listing, a failed unlink)", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, dir string) error {
			ctx := context.Background()
			if _, err := uv.Stat(ctx, r, dir); err != nil {
				return err
			}
			if _, err := uv.ReadDir(ctx, r, dir); err != nil {
				return err
			}
			_, err := uv.Unlink(ctx, r, dir+"/missing")
			return err
		}},
	{name: "file", n: 20_000, why: "each open is a thread-pool request and a descriptor", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.OpenFile(context.Background(), r, "/dev/null", os.O_RDONLY, 0)
			return err
		}},
	{name: "addrinfo", n: 20_000, why: "each is a lookup on the thread pool", batch: 200,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.NewAddrInfo(r, "127.0.0.1", "80", uv.AddrInfoHints{})
			return err
		}},
	{name: "task", n: 100_000, why: "each runs on the task pool", batch: 1_000,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.QueueTask(r, func(context.Context) (any, error) { return nil, nil })
			return err
		}},
	{name: "thread", n: 5_000, why: "each is an OS thread", batch: 100,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.NewThread(r, func(context.Context) (any, error) { return nil, nil })
			return err
		}},
	{name: "process", n: 1_000, why: "each is a child process", batch: 20,
		create: func(_ *testing.T, r *reactor.Reactor, _ string) error {
			_, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/true"}})
			return err
		}},
}

// TestStressG1EveryKind: for every kind, on each driver, n events made
// and dropped without Close under GOGC=10 leave, after collections and loop turns, no live handle in Stats, no C
// handle, and the descriptor and goroutine counts where they were.
func TestStressG1EveryKind(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	dir := t.TempDir()
	total := 0
	for _, k := range g1Kinds {
		t.Run(k.name, func(t *testing.T) {
			n := stressScale(k.n)
			for _, d := range conform.Drivers {
				if !conform.Available(d) {
					t.Logf("%v driver: not in this build (no cgo)", d)
					continue
				}
				total += g1Run(t, k, d, n, dir)
			}
			if k.why != "" {
				t.Logf("%s: %d instead of a million: %s", k.name, n, k.why)
			}
		})
	}
	t.Logf("G1: %d events made and dropped in all", total)
}

func g1Run(t *testing.T, k g1Kind, d reactor.Driver, n int, dir string) int {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactorOn(t, d)
	start := time.Now()
	ctx := context.Background()
	for made := 0; made < n; made += k.batch {
		var err error
		run := func() {
			for range min(k.batch, n-made) {
				if err = k.create(t, u.Reactor, dir); err != nil {
					return
				}
			}
		}
		if k.name == "file" {
			// OpenFile waits for the loop to complete the open: it
			// needs a loop running, and cannot be made inside Command.
			stop := uv.UvtServe(t, u)
			run()
			stop()
		} else if e := u.Call(run); e != nil {
			t.Fatalf("%v: batch at %d: %v", d, made, e)
		}
		if err != nil {
			t.Fatalf("%v: %s at %d: %v", d, k.name, made, err)
		}
		if (made/k.batch)%10 == 0 {
			runtime.GC()
		}
		turn, cancel := context.WithTimeout(ctx, time.Millisecond)
		u.RunOnce(turn)
		cancel()
	}
	uv.UvtCollectUntil(t, u, fmt.Sprintf("every dropped %s to be freed", k.name), func() bool {
		s := u.Stats()
		return s.CHandles == 0 && len(s.Handles) == 0 && s.Active == 0 && s.Coroutines == 0
	})
	t.Logf("%v: %d %s events dropped and freed in %v", d, n, k.name, time.Since(start).Round(time.Millisecond))
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
	return n
}
