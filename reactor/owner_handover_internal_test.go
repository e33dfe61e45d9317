package reactor

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
)

const revBound = 5 * time.Second

func revNew(t *testing.T) *Reactor {
	t.Helper()
	r, err := New(Options{Driver: DriverGo, OnReport: func(event.Event, string, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func revQueued(r *Reactor) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}

func revWaitQueued(t *testing.T, r *Reactor, n int) {
	t.Helper()
	deadline := time.Now().Add(revBound)
	for revQueued(r) < n {
		if time.Now().After(deadline) {
			t.Fatalf("queue never reached %d", n)
		}
		runtime.Gosched()
	}
}

func revWithin(t *testing.T, what string, fn func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
		return true
	case <-time.After(revBound):
		t.Errorf("%s: hang", what)
		return false
	}
}

// goexitQueued blocks r's owner inside a Call (the loop goroutine if a run
// has r, else that Call's goroutine, owning it directly), queues a Call of
// runtime.Goexit behind it and, when behind, an ordinary Call after that,
// then lets the owner go: the Goexit Call must return ErrGoexit, and the
// Call behind it must return nil.
func goexitQueued(t *testing.T, r *Reactor, behind bool) {
	t.Helper()
	hold := make(chan struct{})
	in := make(chan struct{})
	go r.Call(func() { close(in); <-hold })
	<-in
	g1 := make(chan error, 1)
	go func() { g1 <- r.Call(runtime.Goexit) }()
	revWaitQueued(t, r, 1)
	g2 := make(chan error, 1)
	if behind {
		go func() { g2 <- r.Call(func() {}) }()
		revWaitQueued(t, r, 2)
	}
	close(hold)
	if err := <-g1; !errors.Is(err, ErrGoexit) {
		t.Errorf("Call(Goexit) = %v", err)
	}
	if !behind {
		return
	}
	select {
	case err := <-g2:
		if err != nil {
			t.Errorf("second Call = %v", err)
		}
	case <-time.After(revBound):
		t.Errorf("the Call queued behind the Goexit never returned")
	}
}

// A queued operation that calls runtime.Goexit, drained by release (the
// direct owner lets go): the reactor must not stay owned by the dead
// goroutine, and the operation queued behind it must run.
func TestHandoverGoexitInReleaseDrain(t *testing.T) {
	r := revNew(t)
	goexitQueued(t, r, true)
	revWithin(t, "fresh Call", func() { r.Call(func() {}) })
	revWithin(t, "Close", func() { r.Close() })
}

// Same, one operation only: ownership must be given up.
func TestHandoverGoexitInReleaseDrainAlone(t *testing.T) {
	r := revNew(t)
	goexitQueued(t, r, false)
	revWithin(t, "fresh Call", func() { r.Call(func() {}) })
	revWithin(t, "Close", func() { r.Close() })
}

// A Goexit in an operation that a run drains at its release (queued during
// its last turn).
func TestHandoverGoexitInRunRelease(t *testing.T) {
	r := revNew(t)
	g1 := make(chan error, 1)
	// A: queued before the run; it makes H queue a Goexit op and waits until
	// it is queued, so that it is left for release's drain.
	r.mu.Lock()
	r.owned = true // pretend someone owns so that A is queued
	r.mu.Unlock()
	go r.Post(func() {
		go func() { g1 <- r.Call(runtime.Goexit) }()
		revWaitQueued(t, r, 1)
	})
	revWaitQueued(t, r, 1)
	r.mu.Lock()
	r.owned = false
	r.mu.Unlock()
	revWithin(t, "RunNoWait", func() { r.RunNoWait(context.Background()) })
	<-g1
	revWithin(t, "fresh Call", func() { r.Call(func() {}) })
	revWithin(t, "Close", func() { r.Close() })
}

// Exactly-once under churn: Call/Post from many goroutines while runs come
// and go and a Shutdown with a short context tries, then Close.
func TestHandoverExactlyOnceChurn(t *testing.T) {
	r := revNew(t)
	const workers, per = 8, 200
	var mu sync.Mutex
	ran := map[int]int{}
	results := make([]error, workers*per)
	isPost := make([]bool, workers*per)
	var wg sync.WaitGroup
	stopRuns := make(chan struct{})
	var runs sync.WaitGroup
	for k := 0; k < 2; k++ {
		runs.Add(1)
		go func(k int) {
			defer runs.Done()
			for i := 0; ; i++ {
				select {
				case <-stopRuns:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				switch (i + k) % 3 {
				case 0:
					r.RunNoWait(ctx)
				case 1:
					r.RunOnce(ctx)
				case 2:
					r.Serve(ctx)
				}
				cancel()
				if r.closing.Load() {
					runtime.Gosched()
				}
			}
		}(k)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				id := w*per + i
				fn := func() { mu.Lock(); ran[id]++; mu.Unlock() }
				if i%3 == 0 {
					isPost[id] = true
					results[id] = r.Post(fn)
				} else {
					results[id] = r.Call(fn)
				}
				if i == per/2 && w == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Microsecond)
					r.Shutdown(ctx)
					cancel()
				}
			}
		}(w)
	}
	if !revWithin(t, "workers", wg.Wait) {
		return
	}
	close(stopRuns)
	if !revWithin(t, "runs", runs.Wait) {
		return
	}
	if !revWithin(t, "Close", func() { r.Close() }) {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for id, err := range results {
		switch {
		case err == nil && ran[id] != 1:
			t.Errorf("op %d (post %v) returned nil, ran %d times", id, isPost[id], ran[id])
		case err != nil && ran[id] != 0:
			t.Errorf("op %d returned %v, ran %d times", id, err, ran[id])
		}
	}
}

// Operations that keep re-posting themselves through goroutines: a Run
// waiting for ownership must get it, and an outside Call must return.
func TestHandoverRepostFlood(t *testing.T) {
	r := revNew(t)
	var stop sync.WaitGroup
	quit := make(chan struct{})
	var repost func()
	repost = func() {
		select {
		case <-quit:
			return
		default:
		}
		stop.Add(1)
		go func() { defer stop.Done(); r.Post(repost) }()
	}
	for i := 0; i < 4; i++ {
		r.Post(repost)
	}
	for i := 0; i < 20; i++ {
		revWithin(t, "Call during flood", func() { r.Call(func() {}) })
		revWithin(t, "RunNoWait during flood", func() {
			ctx, cancel := context.WithTimeout(context.Background(), revBound)
			defer cancel()
			if err := r.RunNoWait(ctx); err != nil && !errors.Is(err, ErrRunning) {
				t.Errorf("RunNoWait = %v", err)
			}
		})
	}
	close(quit)
	revWithin(t, "Close during flood", func() { r.Close() })
	revWithin(t, "reposters", stop.Wait)
}

// Shutdown with a context that ends while a direct owner holds the loop and
// operations queue meanwhile: queued Calls must all return.
func TestHandoverShutdownCtxWhileDirect(t *testing.T) {
	r := revNew(t)
	hold := make(chan struct{})
	in := make(chan struct{})
	go r.Call(func() { close(in); <-hold })
	<-in
	ctx, cancel := context.WithCancel(context.Background())
	sd := make(chan error, 1)
	go func() { sd <- r.Shutdown(ctx) }()
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		go func() { errs <- r.Call(func() {}) }()
	}
	revWaitQueued(t, r, 10)
	go cancel()
	close(hold)
	for i := 0; i < 10; i++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("Call = %v", err)
			}
		case <-time.After(revBound):
			t.Fatalf("queued Call hang")
		}
	}
	select {
	case <-sd:
	case <-time.After(revBound):
		t.Fatalf("Shutdown hang")
	}
	revWithin(t, "Close", func() { r.Close() })
}

// A Goexit in a queued operation during a Serve turn: the operation queued
// behind it in the same batch must still run (the run's release drains).
func TestHandoverGoexitInTurnBatch(t *testing.T) {
	r := revNew(t)
	served := make(chan error, 1)
	go func() { served <- r.Serve(context.Background()) }()
	goexitQueued(t, r, true) // in the same batch of the loop
	revWithin(t, "Close", func() { r.Close() })
}

// takeOver chains (release leaves work: a flood of self-re-posting ops),
// direct Calls, runs and Shutdowns with short contexts, then Close: every
// Call returns, every op that was accepted runs exactly once.
func TestHandoverTakeOverChurn(t *testing.T) {
	r := revNew(t)
	var mu sync.Mutex
	ran := map[int]int{}
	accepted := map[int]bool{}
	next := 0
	var bg sync.WaitGroup
	var post func(depth int)
	var post2 func(depth int, q chan struct{})
	post = func(depth int) {
		mu.Lock()
		id := next
		next++
		mu.Unlock()
		err := r.Post(func() {
			mu.Lock()
			ran[id]++
			mu.Unlock()
			if depth < 3000 {
				bg.Add(1)
				q := make(chan struct{})
				go func() { defer bg.Done(); post2(depth+1, q) }()
				select { // until the re-post is queued (or ran directly)
				case <-q:
				case <-time.After(revBound):
				}
			}
		})
		mu.Lock()
		accepted[id] = err == nil
		mu.Unlock()
	}
	post2 = func(depth int, q chan struct{}) {
		go func() {
			for {
				r.mu.Lock()
				n := len(r.queue)
				closed := r.closed
				r.mu.Unlock()
				if n > 0 || closed {
					close(q)
					return
				}
				runtime.Gosched()
			}
		}()
		post(depth)
	}
	for i := 0; i < 4; i++ {
		post(0)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				switch (w + i) % 4 {
				case 0:
					if err := r.Call(func() {}); err != nil && !errors.Is(err, ErrReactorClosed) {
						t.Errorf("Call = %v", err)
					}
				case 1:
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Microsecond)
					r.RunNoWait(ctx)
					cancel()
				case 2:
					if w == 2 && i == 1998 {
						ctx, cancel := context.WithTimeout(context.Background(), 100*time.Microsecond)
						r.Shutdown(ctx)
						cancel()
					} else {
						r.Post(func() {})
					}
				case 3:
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Microsecond)
					r.RunOnce(ctx)
					cancel()
				}
			}
		}(w)
	}
	if !revWithin(t, "workers", wg.Wait) {
		return
	}
	if !revWithin(t, "Close", func() { r.Close() }) {
		return
	}
	if !revWithin(t, "posters", bg.Wait) {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, ok := range accepted {
		if ok {
			n++
		}
	}
	t.Logf("accepted %d of %d", n, len(accepted))
	for id, ok := range accepted {
		if ok && ran[id] != 1 || !ok && ran[id] != 0 {
			t.Errorf("op %d accepted=%v ran %d times", id, ok, ran[id])
		}
	}
}
