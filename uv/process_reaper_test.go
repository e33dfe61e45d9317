package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// StartProcess from another goroutine while the loop runs does not wait
// for the loop: the event's Start is queued to the loop, not a round trip.
// Here the loop is held in a timer's callback until StartProcess has
// returned; the child then counts as active (Run does not end before it)
// and completes with its exit code.
func TestProcessStartOffLoopDoesNotWaitForTheLoop(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		held, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		defer free()
		tm, err := u.NewTimer(time.Millisecond, 0)
		uv.UvtMust(t, err)
		_, err = tm.OnFire(func(error) {
			close(held)
			<-release
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		ran := make(chan error, 1)
		go func() { ran <- u.Run(context.Background()) }()
		uv.UvtRecv(t, held, "the timer's callback")
		type started struct {
			p   *uv.Process
			err error
		}
		got := make(chan started, 1)
		go func() {
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{uv.UvtFixture(t, "child.sh"), "exit", "4"}})
			got <- started{p, err}
		}()
		var s started
		select {
		case s = <-got:
		case <-time.After(uv.UvtSafety):
			free()
			t.Fatalf("StartProcess off the loop waited for the loop held in a callback")
		}
		free()
		uv.UvtMust(t, s.err)
		if res := awaitOne(t, s.p); res.Result != 4 || res.Err != nil {
			t.Errorf("outcome %+v, want exit 4", res)
		}
		uv.UvtMust(t, uv.UvtRecv(t, ran, "Run's return"))
		if a := u.Stats().Active; a != 0 {
			t.Errorf("Active = %d after the child's end, want 0", a)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// A waiting child costs no goroutine of its own: one reaper for the whole
// program waits on every child's pidfd. Twenty sleeping children add at
// most a few goroutines (the reaper), not twenty; each still ends with its
// own status, and the reaper is gone once no child is left.
func TestProcessWaitingChildrenShareOneReaper(t *testing.T) {
	base, fds := uv.UvtBaseline(t)
	u := uv.UvtNewReactor(t)
	before := runtime.NumGoroutine()
	procs := make([]*uv.Process, 20)
	for i := range procs {
		procs[i] = spawnChild(t, u.Reactor, uv.ProcessOptions{}, "sleep", "100")
	}
	if added := runtime.NumGoroutine() - before; added > 3 {
		t.Errorf("%d children waiting added %d goroutines, want at most 3", len(procs), added)
	}
	for i, p := range procs {
		sig := syscall.SIGKILL
		if i%2 == 0 {
			sig = syscall.SIGTERM
		}
		uv.UvtMust(t, p.Kill(sig))
	}
	for i, p := range procs {
		want := -int(syscall.SIGKILL)
		if i%2 == 0 {
			want = -int(syscall.SIGTERM)
		}
		if got := awaitOne(t, p); got.Result != want || got.Err != nil {
			t.Errorf("child %d: %+v, want %d", i, got, want)
		}
	}
	uv.UvtShutdown(t, u, false)
	uv.UvtNoLeaks(t, base, fds)
}

// Children that end quickly, many at once, on several reactors, each
// driven by its own goroutine and fed from others: every event gets its
// own child's exit code, exactly once, whatever descriptor numbers the
// pidfds reuse; no child is left a zombie, nothing leaks.
func TestProcessManyReactorsManyChildren(t *testing.T) {
	const reactors, each = 3, 40
	base, fds := uv.UvtBaseline(t)
	child := uv.UvtFixture(t, "child.sh")
	var wg sync.WaitGroup
	errs := make(chan error, reactors*each)
	var pidsMu sync.Mutex
	var pids []int
	us := make([]*uv.UvtReactor, reactors)
	for k := range reactors {
		d := reactor.DriverLibuv
		if k%2 == 1 || !conform.Available(reactor.DriverLibuv) {
			d = reactor.DriverGo
		}
		u := uv.UvtNewReactorOn(t, d)
		us[k] = u
		stop := uv.UvtServe(t, u)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stop()
			var spawners sync.WaitGroup
			for s := range 4 {
				spawners.Add(1)
				go func() {
					defer spawners.Done()
					for i := s; i < each; i += 4 {
						code := (i + k) % 7
						p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", fmt.Sprint(code)}})
						if err != nil {
							errs <- err
							continue
						}
						pidsMu.Lock()
						pids = append(pids, p.Pid())
						pidsMu.Unlock()
						n := 0
						var res any
						done := make(chan struct{})
						_, err = event.Subscribe(p, func(_ event.Event, r any, err error) {
							n++
							res = r
							if err != nil {
								res = err
							}
							close(done)
						})
						if err != nil && !errors.Is(err, event.ErrClosed) {
							errs <- err
							continue
						}
						if err != nil { // ended already: its stored outcome
							p.Replay(event.NewCallback(func(_ event.Event, r any, _ error) { n++; res = r; close(done) }))
						}
						select {
						case <-done:
						case <-time.After(uv.UvtSafety):
							errs <- fmt.Errorf("reactor %d child %d (pid %d): no completion", k, i, p.Pid())
							continue
						}
						if st, ok := p.ExitStatus(); !ok || st != code || res != code {
							errs <- fmt.Errorf("reactor %d child %d: result %v, status %d %v; want %d", k, i, res, st, ok, code)
						}
					}
				}()
			}
			spawners.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, pid := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && regexp.MustCompile(`\) Z `).Match(b) {
			t.Errorf("pid %d is a zombie", pid)
		}
	}
	for _, u := range us {
		uv.UvtShutdown(t, u, false)
	}
	uv.UvtNoLeaks(t, base, fds)
}

// StartProcess racing the reactor's Close, from goroutines while the loop
// serves: each call either fails with ErrReactorClosed (its child, if one
// was started, killed and reaped) or returns a Process whose child is
// reaped and whose event ends closed; no child is left a zombie.
func TestProcessStartRacingReactorClose(t *testing.T) {
	for round := range 5 {
		u := uv.UvtNewReactor(t)
		stop := uv.UvtServe(t, u)
		child := uv.UvtFixture(t, "child.sh")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var procs []*uv.Process
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{child, "exit", "0"}})
					if err != nil {
						if !errors.Is(err, reactor.ErrReactorClosed) {
							t.Errorf("round %d: StartProcess = %v, want nil or ErrReactorClosed", round, err)
						}
						return
					}
					mu.Lock()
					procs = append(procs, p)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(round+1) * 5 * time.Millisecond)
		stop()
		uv.UvtMust(t, u.Close())
		wg.Wait()
		for _, p := range procs {
			uv.UvtRecv(t, p.Exited(), "a child's reaping")
			if st := event.StateOf(p); st != event.StateClosed {
				t.Errorf("round %d: pid %d: state %v after the reactor's Close, want closed", round, p.Pid(), st)
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid())); err == nil && regexp.MustCompile(`\) Z `).Match(b) {
				t.Errorf("round %d: pid %d is a zombie", round, p.Pid())
			}
		}
		uv.UvtShutdown(t, u, false)
	}
}
