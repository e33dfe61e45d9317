package reactor_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// Many reactors at once, each with cooperative coroutines that pass tokens
// to one another through futures (the baton goes straight from a parking
// coroutine to the next ready one), wait on timers, cancel one another,
// panic, call runtime.Goexit, and sometimes see their reactor closed under
// them from another goroutine; half the reactors run from a goroutine
// locked to its OS thread. Every coroutine must end (a lost wake-up
// hangs: the deadline catches it), no two ever hold the baton at once
// (plain memory only the holder touches; -race checks it too), and none
// ends with an error the test did not cause (a baton given twice panics).
func TestBatonStress(t *testing.T) {
	reactors := 6
	if testing.Short() {
		reactors = 2
	}
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		var wg sync.WaitGroup
		for k := range reactors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if k%2 == 1 { // Run from a goroutine locked to its thread: the loop parks in step locked
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				batonStress(t, d, uint64(k))
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			buf := make([]byte, 1<<20)
			t.Fatalf("the reactors did not end: a wake-up was lost\n%s", buf[:runtime.Stack(buf, true)])
		}
	})
}

var errStressPanic = errors.New("stress: a coroutine panics")

func batonStress(t *testing.T, d reactor.Driver, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	r, err := reactor.New(reactor.Options{Driver: d, OnReport: func(event.Event, string, error) {}})
	if err != nil {
		t.Error(err)
		return
	}
	const members, hopsMax = 8, 3000
	// Loop-owned: touched only by the baton's holder.
	var (
		held  bool
		hops  int
		inbox [members]int
		cur   [members]*event.Future[int]
		cos   [members]*reactor.Coroutine[int]
	)
	for i := range cur {
		cur[i] = event.NewFuture[int](r)
	}
	give := func(j int) {
		inbox[j]++
		if !cur[j].Done() {
			cur[j].Resolve(1)
		}
	}
	closeAt := -1 // the hop at which another goroutine closes the reactor
	if rng.IntN(3) == 0 {
		closeAt = rng.IntN(hopsMax)
	}
	closing := make(chan struct{})
	var closed atomic.Bool // set before the reactor closes: coroutines then run on unlent
	var alive [members]bool
	for i := range alive {
		alive[i] = true
	}
	// giveLive passes a token to a coroutine still running (none left: the
	// token is gone).
	giveLive := func(rng *rand.Rand) {
		j := rng.IntN(members)
		for range members {
			if alive[j] {
				give(j)
				return
			}
			j = (j + 1) % members
		}
	}
	for i := range members {
		crng := rand.New(rand.NewPCG(seed, uint64(i)+100))
		cos[i], err = reactor.Spawn(context.Background(), r, func(ctx context.Context) (int, error) {
			enter := func() error {
				if held {
					return errors.New("two coroutines hold the baton")
				}
				held = true
				return nil
			}
			// leave: the coroutine ends holding the baton; its tokens go on.
			leave := func() {
				alive[i] = false
				for range inbox[i] {
					giveLive(crng)
				}
				inbox[i] = 0
				held = false
			}
			if err := enter(); err != nil {
				return 0, err
			}
			if i < 3 {
				give(i + 3) // tokens to begin with
			}
			for hops < hopsMax {
				held = false
				f := cur[i]
				_, err := f.Await(ctx)
				if closed.Load() {
					return 0, err // no longer lent: touch nothing shared
				}
				if e := enter(); e != nil {
					return 0, e
				}
				if err != nil {
					leave()
					return 0, err // cancelled or a deadlock: the reactor's to say
				}
				cur[i] = event.NewFuture[int](r)
				n := inbox[i]
				inbox[i] = 0
				for range n {
					hops++
					if hops == closeAt {
						closed.Store(true)
						close(closing)
					}
					giveLive(crng)
				}
				switch crng.IntN(512) {
				case 0:
					leave()
					panic(errStressPanic)
				case 1:
					leave()
					runtime.Goexit()
				case 2, 3:
					if c := cos[crng.IntN(members)]; c != nil {
						c.Cancel() // maybe itself: its next wait ends
					}
				case 4, 5, 6, 7, 8, 9, 10, 11:
					tm, err := r.NewTimer(time.Duration(crng.IntN(2))*time.Millisecond, 0)
					if err != nil {
						leave()
						return 0, err
					}
					held = false
					_, err = event.Await(ctx, event.Any(), tm)
					if closed.Load() {
						return 0, err
					}
					tm.Close()
					if e := enter(); e != nil {
						return 0, e
					}
					if err != nil {
						leave()
						return 0, err
					}
				}
			}
			leave()
			return hops, nil
		})
		if err != nil {
			t.Error(err)
			return
		}
	}
	ran := make(chan struct{})
	go func() {
		select {
		case <-closing:
			r.Close()
		case <-ran:
		}
	}()
	runErr := r.Run(context.Background())
	close(ran)
	r.Close()
	for i, c := range cos {
		select {
		case <-doneCh(c):
		case <-time.After(time.Minute):
			t.Errorf("seed %d: coroutine %d never ended", seed, i)
			continue
		}
		_, _, err := c.Outcome()
		var pe *event.PanicError
		switch {
		case err == nil, errors.Is(err, context.Canceled), errors.Is(err, event.ErrDeadlock),
			errors.Is(err, reactor.ErrReactorClosed), errors.Is(err, reactor.ErrGoexit):
		case errors.As(err, &pe) && pe.Value == errStressPanic:
		default:
			t.Errorf("seed %d: coroutine %d ended with %v (run: %v)", seed, i, err, runErr)
		}
	}
}

// doneCh is closed when the coroutine's outcome is in.
func doneCh(c *reactor.Coroutine[int]) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for !c.Done() {
			time.Sleep(100 * time.Microsecond)
		}
		close(ch)
	}()
	return ch
}
