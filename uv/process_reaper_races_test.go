package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Tests that try to break the children's reaper (uv/process_reaper_linux.go):
// spawns landing as it tears down, os/exec beside it, a loop blocked while
// children end, callbacks that panic, events dropped without Close, spawns
// from another reactor's loop, and spawns with the descriptors exhausted.

var zombieRE = regexp.MustCompile(`\) Z `)

// noZombie fails the test if pid is a zombie (ended and never reaped).
func noZombie(t testing.TB, pid int, what string) {
	t.Helper()
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && zombieRE.Match(b) {
		t.Errorf("%s: pid %d is a zombie", what, pid)
	}
}

// A spawn can land at any moment of the reaper's life, its 100 ms linger
// and its teardown included: children spawned one after another, each
// after the last one's end and a pause that walks across the linger,
// from two goroutines at once, each end with its own status: none is
// lost to a set that is going away, none left a zombie, and nothing
// leaks. The pauses only spread the spawns over the teardown; the test
// asserts outcomes.
func TestProcessSpawnAcrossReaperTeardown(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	child := uv.UvtFixture(t, "child.sh")
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				code := (i + g) % 5
				opts := uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(code)}}
				if i%3 == 0 {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					opts.Context, opts.KillOnClose = ctx, true
				}
				p, err := uv.StartProcess(u.Reactor, opts)
				if err != nil {
					errs <- err
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
				st, err := p.Await(ctx)
				cancel()
				if err != nil || st != code {
					errs <- fmt.Errorf("goroutine %d child %d (pid %d): %d, %v; want %d", g, i, p.Pid(), st, err, code)
				}
				noZombie(t, p.Pid(), "after its completion")
				// 90..114 ms: across the reaper's 100 ms linger.
				time.Sleep(time.Duration(90+i+g*5) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	stop()
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// os/exec used elsewhere in the program at the same time keeps working:
// the reaper reaps only its own children (wait4 on their pids), never one
// of os/exec's, and os/exec never takes one of the reaper's.
func TestProcessBesideOSExec(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	defer stop()
	child := uv.UvtFixture(t, "child.sh")
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := range 3 {
		wg.Add(2)
		go func() { // os/exec
			defer wg.Done()
			for i := range 20 {
				code := (i + g) % 4
				err := exec.CommandContext(ctx, child, "exit", fmt.Sprint(code)).Run()
				var ee *exec.ExitError
				switch {
				case code == 0 && err != nil:
					errs <- fmt.Errorf("os/exec exit 0: %v", err)
				case code != 0 && (!errors.As(err, &ee) || ee.ExitCode() != code):
					errs <- fmt.Errorf("os/exec exit %d: %v", code, err)
				}
			}
		}()
		go func() { // uv
			defer wg.Done()
			for i := range 20 {
				code := (i + g + 1) % 4
				p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(code)}})
				if err != nil {
					errs <- err
					continue
				}
				if st, err := p.Await(ctx); err != nil || st != code {
					errs <- fmt.Errorf("uv child exit %d: %d, %v", code, st, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A callback that blocks the loop does not hold the children's ends back:
// inside it, every child's Exited closes (the reaper needs no loop), and
// the completions come once it returns.
func TestProcessExitedWhileLoopBlocked(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		child := uv.UvtFixture(t, "child.sh")
		const n = 6
		procs := make([]*uv.Process, n)
		held := make(chan struct{})
		release := make(chan struct{})
		var blockedErr error
		tm, err := u.NewTimer(time.Millisecond, 0)
		uv.UvtMust(t, err)
		_, err = tm.OnFire(func(error) {
			close(held)
			<-release
			for i, p := range procs {
				select {
				case <-p.Exited():
				case <-time.After(uv.UvtSafety):
					blockedErr = fmt.Errorf("child %d's Exited not closed while the loop was blocked", i)
					return
				}
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		ran := make(chan error, 1)
		go func() { ran <- u.Run(context.Background()) }()
		uv.UvtRecv(t, held, "the blocking callback")
		for i := range procs {
			// Spawned from another goroutine while the loop is blocked:
			// their Starts wait in the queue.
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(i + 1)}})
			uv.UvtMust(t, err)
			procs[i] = p
		}
		close(release)
		uv.UvtMust(t, uv.UvtRecv(t, ran, "Run's return"))
		if blockedErr != nil {
			t.Fatal(blockedErr)
		}
		for i, p := range procs {
			if res := awaitOne(t, p); res.Result != i+1 || res.Err != nil {
				t.Errorf("child %d: %+v, want exit %d", i, res, i+1)
			}
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A panic in one child's OnExit callback is reported and holds back no
// other child's end: every other callback is called with its status, and
// the loop goes on.
func TestProcessOnExitPanicsHoldNothingBack(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		defer stop()
		child := uv.UvtFixture(t, "child.sh")
		const n = 8
		got := make(chan [2]int, n)
		for i := range n {
			uv.UvtMust(t, u.Call(func() {
				p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(i)}})
				uv.UvtMust(t, err)
				_, err = p.OnExit(func(status int, err error) {
					if i%2 == 0 {
						panic(fmt.Sprintf("OnExit of child %d", i))
					}
					got <- [2]int{i, status}
				})
				uv.UvtMust(t, err)
			}))
		}
		seen := map[int]int{}
		for range n / 2 {
			v := uv.UvtRecv(t, got, "an OnExit that does not panic")
			seen[v[0]] = v[1]
		}
		for i := 1; i < n; i += 2 {
			if st, ok := seen[i]; !ok || st != i {
				t.Errorf("child %d: OnExit status %d (called %v), want %d", i, st, ok, i)
			}
		}
		// The loop goes on: a call still runs on it.
		uv.UvtMust(t, u.Call(func() {}))
		uv.UvtWaitFor(t, "the panics' reports", func() bool { return len(u.Reports()) >= n/2 })
		stop()
		uv.UvtShutdown(t, u, true)
	})
}

// Process events dropped without Close, under a small GOGC with the
// collector run again and again: every child is reaped (no zombie), and
// no pidfd or goroutine is left.
func TestProcessDroppedUnderGCLeavesNothing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	child := uv.UvtFixture(t, "child.sh")
	var pids []int
	for i := range 40 {
		args := []string{child, "exit", "0"}
		if i%4 == 0 {
			args = []string{child, "sleep", "0.05"}
		}
		p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: args})
		uv.UvtMust(t, err)
		pids = append(pids, p.Pid())
		runtime.GC()
	}
	// No Process is referenced any more: only the reaper and the loop
	// hold them, until they end.
	for range 5 {
		runtime.GC()
	}
	uv.UvtWaitFor(t, "every child's reaping", func() bool {
		runtime.GC()
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil { // running, or a zombie not reaped
				return false
			}
		}
		return true
	})
	for _, pid := range pids {
		noZombie(t, pid, "dropped")
	}
	uv.UvtWaitFor(t, "the loop's end of every child", func() bool {
		var a int
		u.Call(func() { a = u.Stats().Active })
		return a == 0
	})
	stop()
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// StartProcess called on reactor B from reactor A's loop goroutine (a
// callback of A), with B served by a goroutine of its own and with B run
// by nobody: the child starts, B counts it and completes it; A's loop
// is not held.
func TestProcessStartFromAnotherReactorsLoop(t *testing.T) {
	for _, bServed := range []bool{true, false} {
		t.Run(fmt.Sprintf("served=%v", bServed), func(t *testing.T) {
			a := uv.UvtNewReactor(t)
			b := uv.UvtNewReactor(t)
			stopA := uv.UvtServe(t, a)
			defer stopA()
			stopB := func() {}
			if bServed {
				stopB = uv.UvtServe(t, b)
			}
			child := uv.UvtFixture(t, "child.sh")
			var p *uv.Process
			var serr error
			uv.UvtMust(t, a.Call(func() {
				p, serr = uv.StartProcess(b.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "5"}})
			}))
			uv.UvtMust(t, serr)
			if bServed {
				if st, err := p.Await(context.Background()); err != nil || st != 5 {
					t.Errorf("Await = %d, %v; want 5", st, err)
				}
			} else {
				uv.UvtRecv(t, p.Exited(), "the child's end")
				uv.UvtMust(t, b.Run(context.Background()))
				if st, ok, err := p.Outcome(); !ok || st != 5 || err != nil {
					t.Errorf("Outcome = %d, %v, %v; want 5", st, ok, err)
				}
			}
			stopB()
			stopA()
			uv.UvtShutdown(t, b, false)
			uv.UvtShutdown(t, a, false)
		})
	}
}

// Reactors closed while their children end, from other goroutines, with
// KillOnClose children and without, on both drivers at once: every
// child is reaped (Exited closes, no zombie), every Close returns, and no
// child is left in the table of running children.
func TestProcessReactorsClosedMidExit(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	child := uv.UvtFixture(t, "child.sh")
	for round := range 4 {
		var us []*uv.UvtReactor
		var procs []*uv.Process
		for k := range 4 {
			d := reactor.DriverGo
			if k%2 == 0 && conform.Available(reactor.DriverLibuv) {
				d = reactor.DriverLibuv
			}
			u := uv.UvtNewReactorOn(t, d)
			us = append(us, u)
			uv.UvtServe(t, u)
			for i := range 6 {
				opts := uv.ProcessOptions{Args: []string{child, "exit", "1"}, KillOnClose: i%2 == 0}
				if i%3 == 0 {
					opts.Args = []string{child, "sleep", "10"}
				}
				p, err := uv.StartProcess(u.Reactor, opts)
				uv.UvtMust(t, err)
				procs = append(procs, p)
			}
		}
		var wg sync.WaitGroup
		for _, u := range us {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(round) * time.Millisecond)
				if err := u.Close(); err != nil {
					t.Errorf("round %d: Close: %v", round, err)
				}
			}()
		}
		wg.Wait()
		for _, p := range procs {
			if _, ok := p.ExitStatus(); !ok {
				// Not KillOnClose: the sleeper runs on; end it.
				p.Kill(syscall.SIGKILL)
			}
			uv.UvtRecv(t, p.Exited(), "a child's reaping")
			noZombie(t, p.Pid(), fmt.Sprintf("round %d", round))
			if st := event.StateOf(p); st != event.StateClosed {
				t.Errorf("round %d: pid %d: %v after the reactor's Close", round, p.Pid(), st)
			}
		}
		// Exited closes before the reaper lets go of the child: it is
		// forgotten a moment later, never kept.
		for i, u := range us {
			for _, p := range procs[i*6 : i*6+6] {
				uv.UvtWaitFor(t, fmt.Sprintf("round %d: pid %d forgotten by its closed reactor", round, p.Pid()), func() bool {
					_, err := uv.LookupProcess(u.Reactor, p.Pid())
					return errors.Is(err, syscall.ECHILD)
				})
			}
		}
	}
	uv.UvtNoLeaks(t, base, fds)
}

// A program that cannot be executed (not executable: EACCES; not there:
// ENOENT) is a clear error from StartProcess, leaves no descriptor, no
// zombie and no goroutine, and the reactor keeps running.
func TestProcessExecFailureLeavesNothing(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	notExec := t.TempDir() + "/not-executable"
	uv.UvtMust(t, os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	for i := range 20 {
		path, want := notExec, error(syscall.EACCES)
		if i%2 == 1 {
			path, want = t.TempDir()+"/missing", error(os.ErrNotExist)
		}
		_, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{path}, Stdout: uv.StdioPipe, KillOnClose: true})
		if !errors.Is(err, want) {
			t.Fatalf("StartProcess %s = %v, want %v", path, err, want)
		}
	}
	p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{uv.UvtFixture(t, "child.sh"), "exit", "2"}})
	uv.UvtMust(t, err)
	if st, err := p.Await(context.Background()); err != nil || st != 2 {
		t.Errorf("a child after the failures: %d, %v", st, err)
	}
	stop()
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// Descriptor exhaustion during a spawn: with RLIMIT_NOFILE lowered and
// every descriptor but k taken (k from 0 up), StartProcess either fails
// with an error matching EMFILE or starts a child that is reaped with its
// status (the reaper's set, or its epoll_ctl, may be what could not be
// had); the reactor keeps running, and once the descriptors are given
// back nothing is left open. In a child process, so that the limit
// touches nothing else.
func TestProcessSpawnDescriptorExhaustion(t *testing.T) {
	if inChild(t, "UVEVENT_SPAWN_EMFILE_CHILD") {
		conform.EachDriver(t, spawnEMFILEChild)
	}
}

func spawnEMFILEChild(t *testing.T, d reactor.Driver) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	defer stop()
	child := uv.UvtFixture(t, "child.sh")
	// Warm up what a spawn opens for good (/dev/null for ignored streams).
	p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}})
	uv.UvtMust(t, err)
	uv.UvtRecv(t, p.Exited(), "the warm-up child's end")
	// Let the reaper of the warm-up go, so that a spawn below has to make
	// a new set from the descriptors left.
	uv.UvtWaitFor(t, "the warm-up's reaper to go", func() bool { return !uv.UvtReaperRunning() })
	fds := uv.UvtOpenFDs(t)

	var old syscall.Rlimit
	uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
	lim := old
	uv.UvtSetRlimitCur(&lim.Cur, fds+16)
	uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	var hog []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		hog = append(hog, fd)
	}
	defer func() {
		for _, fd := range hog {
			syscall.Close(fd)
		}
	}()
	started, failed := 0, 0
	var procs []*uv.Process
	for k := range 8 {
		if k > 0 && len(hog) > 0 { // one descriptor more free at each step
			syscall.Close(hog[len(hog)-1])
			hog = hog[:len(hog)-1]
		}
		p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(k + 10)}})
		switch {
		case err == nil:
			started++
			procs = append(procs, p)
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			st, err := p.Await(ctx)
			cancel()
			if err != nil || st != k+10 {
				t.Errorf("k=%d: child %d, %v; want %d", k, st, err, k+10)
			}
		case errors.Is(err, syscall.EMFILE):
			failed++
		default:
			t.Errorf("k=%d: StartProcess = %v, want nil or EMFILE", k, err)
		}
		// The reactor keeps running.
		if err := u.Call(func() {}); err != nil {
			t.Fatalf("k=%d: the reactor stopped: %v", k, err)
		}
	}
	t.Logf("%d spawns started, %d refused with EMFILE", started, failed)
	if failed == 0 {
		t.Errorf("no spawn was refused: the descriptors were not exhausted")
	}
	for _, fd := range hog {
		syscall.Close(fd)
	}
	hog = nil
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	for _, p := range procs {
		noZombie(t, p.Pid(), "after exhaustion")
	}
	uv.UvtWaitFor(t, "the descriptors back", func() bool { return uv.UvtOpenFDs(t) <= fds })
}

// KillOnClose children spawned from goroutines while the reactor's Close
// begins: whether a child's Start ran before the Close or was queued and
// ran inside it, the Close terminates the child and waits for its reaping,
// so once Close and every StartProcess have returned, every child
// StartProcess handed out has been reaped (Exited closed), and the
// refused ones were killed and reaped too (no zombie, no descriptor left).
func TestProcessKillOnCloseStartRacingReactorClose(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	child := uv.UvtFixture(t, "child.sh")
	for round := range 6 {
		d := reactor.DriverGo
		if round%2 == 0 && conform.Available(reactor.DriverLibuv) {
			d = reactor.DriverLibuv
		}
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var procs []*uv.Process
		started := make(chan struct{}, 64)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "sleep", "30"}, KillOnClose: true})
					if err != nil {
						if !errors.Is(err, reactor.ErrReactorClosed) {
							t.Errorf("round %d: StartProcess = %v", round, err)
						}
						return
					}
					mu.Lock()
					procs = append(procs, p)
					mu.Unlock()
					select {
					case started <- struct{}{}:
					default:
					}
				}
			}()
		}
		for range round + 1 {
			uv.UvtRecv(t, started, "a spawn")
		}
		stop()
		uv.UvtMust(t, u.Close())
		wg.Wait()
		for _, p := range procs {
			select {
			case <-p.Exited():
			default:
				t.Errorf("round %d: pid %d not reaped when the reactor's Close returned (%s)", round, p.Pid(), p.Info())
				p.Kill(syscall.SIGKILL)
				uv.UvtRecv(t, p.Exited(), "a child's reaping")
			}
			if st, ok := p.ExitStatus(); !ok || st != -int(syscall.SIGKILL) {
				t.Errorf("round %d: pid %d: status %d, %v; want -9", round, p.Pid(), st, ok)
			}
		}
	}
	uv.UvtNoLeaks(t, base, fds)
}

// TestProcessQueuedStartFailingKillsTheChild: a StartProcess from another
// goroutine while the loop is held in a callback queues the event's Start;
// the reactor's Close begins before it runs, so the Start fails after
// StartProcess returned the Process. The child (no KillOnClose) is killed
// and the event closed, as when the Start fails before StartProcess
// returns: no child is left running whose event never started. (Before,
// it ran on, its event closed.)
func TestProcessQueuedStartFailingKillsTheChild(t *testing.T) {
	child := uv.UvtFixture(t, "child.sh")
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		held, release := make(chan struct{}), make(chan struct{})
		tm, err := u.NewTimer(0, 0)
		uv.UvtMust(t, err)
		_, err = tm.OnFire(func(error) {
			close(held)
			<-release
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		uv.UvtRecv(t, held, "the loop held in a callback")
		p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "sleep", "30"}})
		if err != nil {
			close(release)
			t.Fatalf("StartProcess with its Start queued = %v", err)
		}
		closed := make(chan error, 1)
		go func() { closed <- u.Close() }()
		uv.UvtWaitFor(t, "the reactor's Close to begin", func() bool { return uv.UvtClosing(u.Reactor) })
		close(release)
		uv.UvtMust(t, uv.UvtRecv(t, closed, "the reactor's Close"))
		stop()
		uv.UvtRecv(t, p.Exited(), "the child's end")
		if st, ok := p.ExitStatus(); !ok || st != -int(syscall.SIGKILL) {
			t.Errorf("status %d, %v; want -9: the child of a Start that failed is killed", st, ok)
		}
		if !p.Flags().Has(event.Closed) {
			t.Errorf("the event is not closed: %s", p.Info())
		}
	})
}
