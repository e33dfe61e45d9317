package reactor

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
)

// pipeKernel is a kind.Kernel over a pipe, for the reactor's own tests of
// the wait in the kernel on either driver: Wait blocks in poll(2) on the
// read end, Wake writes a byte.
type pipeKernel struct {
	fds   [2]int
	waits atomic.Int64 // Waits that blocked (timeout other than 0)
	wakes atomic.Int64
}

func newPipeKernel(t *testing.T) *pipeKernel {
	t.Helper()
	k := &pipeKernel{}
	if err := unix.Pipe2(k.fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(k.fds[0]); unix.Close(k.fds[1]) })
	return k
}

func (k *pipeKernel) Wait(ms int) bool {
	if ms != 0 {
		k.waits.Add(1)
	}
	p := []unix.PollFd{{Fd: int32(k.fds[0]), Events: unix.POLLIN}}
	if n, _ := unix.Poll(p, ms); n > 0 {
		var b [64]byte
		unix.Read(k.fds[0], b[:])
	}
	return false
}

func (k *pipeKernel) Deliver() int { return 0 }
func (k *pipeKernel) Wake()        { k.wakes.Add(1); unix.Write(k.fds[1], []byte{1}) }
func (k *pipeKernel) FD() int      { return k.fds[0] }

// kernelReactor returns a serving reactor that waits in the kernel only
// (no park in Go after a wake-up): the libuv driver's own, or on the
// pure-Go driver a pipeKernel.
func kernelReactor(t *testing.T, d Driver) (r *Reactor, blocked func() int64, stop func()) {
	t.Helper()
	r, err := New(Options{Driver: d})
	if err != nil {
		t.Skipf("driver %v: %v", d, err)
	}
	r.goPark = 0
	blocked = func() int64 { return int64(r.stats.wakeups.Load()) }
	if r.loop == nil {
		k := newPipeKernel(t)
		r.Call(func() { (*host)(r).SetKernel(k) })
		blocked = k.waits.Load
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	return r, blocked, func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
		if r.loop == nil {
			r.Call(func() { (*host)(r).SetKernel(nil) })
		}
		r.Close()
	}
}

// No wake-up is lost: goroutines queue work while the loop goes to sleep
// in the kernel and wakes, over and over; every Call returns, and the loop
// did sleep in the kernel (a wake-up through it, not only a busy loop).
func TestKernelWakeUpsAreNotLost(t *testing.T) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r, blocked, stop := kernelReactor(t, d)
			defer stop()
			const senders, calls = 4, 500
			var wg sync.WaitGroup
			var ran atomic.Int64
			for range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range calls {
						if err := r.Call(func() { ran.Add(1) }); err != nil {
							t.Error(err)
							return
						}
						if i%16 == 0 {
							runtime.Gosched() // let the loop fall asleep now and then
						}
					}
				}()
			}
			finished := make(chan struct{})
			go func() { wg.Wait(); close(finished) }()
			select {
			case <-finished:
			case <-time.After(30 * time.Second):
				t.Fatalf("Calls still waiting after 30 s (%d of %d ran): a wake-up was lost", ran.Load(), senders*calls)
			}
			if n := ran.Load(); n != senders*calls {
				t.Fatalf("%d operations ran, want %d", n, senders*calls)
			}
			// One more, after the loop has certainly gone to sleep.
			for blocked() == 0 {
				if err := r.Call(func() {}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// After a wake-up from another goroutine the loop parks in Go (the wake
// then is a channel send), and goes back to the kernel once nothing from
// another goroutine comes for a while.
func TestParkInGoAfterForeignWakeUp(t *testing.T) {
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r, _, stop := kernelReactor(t, d)
			defer stop()
			var turns int
			r.Call(func() { r.goPark = goParkTurns })
			for r.sleep.Load() != inKernel {
				time.Sleep(time.Millisecond) // until the loop sleeps in the kernel
			}
			r.Call(func() {}) // woken: the next waits park in Go
			r.Call(func() { turns = r.goTurns })
			if turns == 0 {
				t.Fatalf("after a Call from another goroutine, goTurns = 0, want the loop to park in Go")
			}
		})
	}
}

// A busy loop lets other goroutines run, even on one processor: a loop
// that never parks yields (runtime.Gosched) every yieldAfter.
func TestBusyLoopYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, d := range []Driver{DriverLibuv, DriverGo} {
		t.Run(d.String(), func(t *testing.T) {
			r, err := New(Options{Driver: d})
			if err != nil {
				t.Skipf("driver %v: %v", d, err)
			}
			defer r.Close()
			var progress atomic.Int64
			const want = 50
			spin, err := r.NewTimer(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Started again by its own callback (a fired one-shot timer is
			// stopped, not closed), always due: the loop never parks.
			var fired atomic.Int64
			event.Subscribe(spin, func(event.Event, any, error) { fired.Add(1); spin.Start() })
			if err := spin.Start(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Serve(ctx) }()
			for fired.Load() == 0 {
				runtime.Gosched() // until the loop is busy
			}
			// Until the other goroutine made its progress and the loop
			// yielded: it may also run while the loop's thread is in a
			// system call, its processor handed over (the libuv driver's
			// cgo calls), so its progress alone does not prove a yield.
			// The loop yields after yieldAfter of busy turns; the bound
			// is the safety's.
			deadline := time.Now().Add(30 * time.Second)
			going := func() bool {
				return progress.Load() < want || r.stats.yields.Load() == 0 && time.Now().Before(deadline)
			}
			go func() {
				for going() {
					progress.Add(1)
					runtime.Gosched()
				}
			}()
			for going() {
				runtime.Gosched()
			}
			cancel()
			if err := <-done; err != context.Canceled {
				t.Fatalf("Serve = %v, want context.Canceled", err)
			}
			// The other goroutine ran while the loop was busy (the loop
			// only ever yields or is preempted, and it yields first).
			if r.stats.yields.Load() == 0 {
				t.Error("the busy loop never yielded")
			}
		})
	}
}
