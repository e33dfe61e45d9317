package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestFSRequestLifecycle follows one request through its life on each
// driver and compares it with the same expectation: it runs from
// submission (Start and Stop change nothing), completes once with the
// bytes read on the loop goroutine, is closed then, replays its result to
// a late subscriber and refuses what a closed event refuses.
func TestFSRequestLifecycle(t *testing.T) {
	type step struct {
		Name  string
		State string
		Refs  int
		Heard []string // the notifications so far
	}
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(path, []byte("lifecycle"), 0o600))
		osf, err := os.Open(path)
		uv.UvtMust(t, err)
		defer osf.Close()
		var q *uv.FSRequest[[]byte]
		var heard []string
		listen := func(who string) func(event.Event, any, error) {
			return func(_ event.Event, res any, err error) {
				b, _ := res.([]byte)
				heard = append(heard, fmt.Sprintf("%s: %q %v on loop %v", who, b, err, u.Owner().Owned()))
			}
		}
		var got []step
		note := func(name string) {
			got = append(got, step{name, event.StateOf(q).String(), eventkind.LoopRefs(q), append([]string(nil), heard...)})
		}
		// Holding the reactor, nothing lands (on the pure-Go driver, any
		// operation from another goroutine would otherwise deliver it).
		uv.UvtMust(t, u.Call(func() {
			var err error
			q, err = uv.UvtFSRead(u.Reactor, osf.Fd())
			uv.UvtMust(t, err)
			_, err = event.Subscribe(q, listen("subscriber"))
			uv.UvtMust(t, err)
			note("submitted")
			uv.UvtMust(t, q.Start())
			note("Start")
			uv.UvtMust(t, q.Stop())
			note("Stop")
		}))
		uv.UvtMust(t, u.Run(context.Background())) // returns once the request is done
		note("Run")
		_, err = event.Subscribe(q, listen("late"))
		uv.UvtMust(t, err)
		note("late Subscribe")
		if err := q.Start(); !errors.Is(err, event.ErrClosed) {
			t.Errorf("Start after completion = %v, want ErrClosed", err)
		}
		uv.UvtMust(t, q.Close())
		q.Dispose()
		note("Close, Dispose")
		result := "subscriber: \"lifecycle\" <nil> on loop true"
		late := "late: \"lifecycle\" <nil> on loop true"
		want := []step{
			{"submitted", "created", 0, nil},
			{"Start", "created", 0, nil},
			{"Stop", "created", 0, nil},
			{"Run", "closed", 0, []string{result}},
			{"late Subscribe", "closed", 0, []string{result, late}},
			{"Close, Dispose", "closed", 0, []string{result, late}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lifecycle differs (-want +got):\n%s", diff)
		}
		if f := q.Flags(); !f.Has(event.GoOwned | event.Closed) {
			t.Errorf("flags %v, want GoOwned and Closed", f)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// eachDriverCounted runs fn on each driver with a fresh reactor and the
// goroutine and descriptor counts taken before it was made, for
// UvtNoLeaks once it is closed.
func eachDriverCounted(t *testing.T, fn func(t *testing.T, u *uv.UvtReactor, base, fds int)) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		fn(t, uv.UvtNewReactorOn(t, d), base, fds)
	})
}

// holdPool fills the pool that runs file operations with opens of a FIFO
// nobody writes to: each blocks its worker until release opens the
// writing end. Requests submitted after them wait in the queue. started
// reports whether one of the opens has begun (a reader waits on the FIFO).
func holdPool(t *testing.T, u *uv.UvtReactor) (blockers []*uv.FSRequest[*uv.File], started func() bool, release func() (done func())) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
	for range uv.UvtPoolSize() {
		q, err := uv.UvtFSOpen(u.Reactor, fifo, unix.O_RDONLY)
		uv.UvtMust(t, err)
		blockers = append(blockers, q)
	}
	writer := -1
	// Opening the writing end without blocking succeeds only while a
	// reader is in the FIFO; it also lets every open of it go through.
	started = func() bool {
		if writer < 0 {
			writer, _ = unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		}
		return writer >= 0
	}
	release = func() func() {
		if writer < 0 {
			var err error
			writer, err = unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0) // never blocks on Linux
			uv.UvtMust(t, err)
		}
		return func() { unix.Close(writer) }
	}
	return blockers, started, release
}

// letPoolGo lets holdPool's opens through and waits until all of them
// have completed.
func letPoolGo(t *testing.T, blockers []*uv.FSRequest[*uv.File], release func() (done func())) {
	t.Helper()
	done := release()
	defer done()
	var opens []event.Event
	for _, q := range blockers {
		opens = append(opens, q)
	}
	if _, err := event.Await(waitCtx(t), event.All().IgnoreErrors(), opens...); err != nil {
		t.Fatal(err)
	}
}

// poolHeld reports whether every worker of the pool is blocked in its
// open of holdPool's FIFO, read from the threads' current system calls
// (/proc/self/task/*/syscall) rather than by opening the writing end,
// which would let the opens through.
func poolHeld() bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	in := 0
	for _, name := range tasks {
		b, err := os.ReadFile(name)
		if err == nil && strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_OPENAT)+" ") {
			in++
		}
	}
	return in >= uv.UvtPoolSize()
}

// TestFSRequestCloseMidflight closes requests before they complete, on
// each driver: a write still queued (it never runs: the file stays empty)
// and opens already running (their subscribers hear ErrClosed, and the
// descriptors they give all the same are closed). Nothing is left.
func TestFSRequestCloseMidflight(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		path := filepath.Join(t.TempDir(), "target")
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, path, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		stop()
		blockers, started, release := holdPool(t, u)
		w, err := f.WriteAsync([]byte("must not be written"), 0)
		uv.UvtMust(t, err)
		var heard []string
		evs := []event.Event{}
		for _, q := range blockers {
			evs = append(evs, q)
		}
		for i, q := range append(evs, w) {
			event.Subscribe(q, func(_ event.Event, res any, err error) {
				heard = append(heard, fmt.Sprintf("%d: %v %v", i, res, errors.Is(err, event.ErrClosed)))
			})
		}
		// Holding the reactor, nothing lands: the pool's outcomes queue up
		// (on the pure-Go driver, any other goroutine's operation would
		// otherwise run them).
		uv.UvtMust(t, u.Call(func() {
			uv.UvtMust(t, w.Close())
			uv.UvtWaitFor(t, "an open to begin", started)
			for _, q := range blockers {
				uv.UvtMust(t, q.Close())
			}
		}))
		want := []string{fmt.Sprintf("%d: <nil> true", len(blockers))} // the write was closed first
		for i := range blockers {
			want = append(want, fmt.Sprintf("%d: <nil> true", i))
		}
		if diff := cmp.Diff(want, heard); diff != "" {
			t.Errorf("notifications differ (-want +got):\n%s", diff)
		}
		done := release()
		uv.UvtMust(t, u.Run(context.Background())) // until every operation has landed
		done()
		if onDisk, _ := os.ReadFile(path); len(onDisk) != 0 {
			t.Errorf("the closed write ran: the file holds %q", onDisk)
		}
		if len(heard) != len(want) {
			t.Errorf("%d notifications after the operations landed, want %d", len(heard), len(want))
		}
		stop = uv.UvtServe(t, u)
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFSRequestsAtReactorClose: the reactor's Close closes the requests in
// flight (their subscribers hear ErrClosed inside it), on each driver; the
// operations that were running finish, and what they opened is closed.
func TestFSRequestsAtReactorClose(t *testing.T) {
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		blockers, _, release := holdPool(t, u)
		var closedHeard atomic.Int32
		allHeard := make(chan struct{})
		for _, q := range blockers {
			event.Subscribe(q, func(_ event.Event, _ any, err error) {
				if errors.Is(err, event.ErrClosed) && int(closedHeard.Add(1)) == len(blockers) {
					close(allHeard)
				}
			})
		}
		closed := make(chan error, 1)
		go func() { closed <- u.Close() }() // on libuv, it waits for the running opens
		uv.UvtRecv(t, allHeard, "ErrClosed for every request")
		done := release()
		uv.UvtMust(t, uv.UvtRecv(t, closed, "the reactor's Close"))
		for _, q := range blockers {
			if !q.Flags().Has(event.Closed) {
				t.Errorf("%s is not closed after the reactor's Close", q.Info())
			}
		}
		uv.UvtShutdown(t, u, false)
		// The pure-Go driver's Close does not wait for the operations
		// running: the writing end stays open until they are over (their
		// pool goroutines gone), so that a late one does not block.
		uv.UvtNoLeaks(t, base, fds+1)
		done()
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileDroppedWithoutClose drops Files and their requests without Close
// or waiting, under GOGC=10, on each driver: the requests complete, nothing
// stays active, and the collector gives the descriptors back.
func TestFileDroppedWithoutClose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	eachDriverCounted(t, func(t *testing.T, u *uv.UvtReactor, base, fds int) {
		dir := t.TempDir()
		stop := uv.UvtServe(t, u)
		for i := range 20 {
			f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(dir, fmt.Sprint(i)), os.O_RDWR|os.O_CREATE, 0o600)
			uv.UvtMust(t, err)
			_, err = f.WriteAsync(bytes.Repeat([]byte{byte(i)}, 4096), 0)
			uv.UvtMust(t, err)
			_, err = f.ReadAsync(4096, 0)
			uv.UvtMust(t, err)
		}
		stop()
		uv.UvtMust(t, u.Run(context.Background()))
		if got := u.Stats().Active; got != 0 {
			t.Errorf("Active = %d after Run, want 0", got)
		}
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}

// TestFileConcurrent uses one File from many goroutines on each driver
// (run it with -race): writes and reads at distinct offsets, and requests
// closed as they complete, each notified exactly once.
func TestFileConcurrent(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(context.Background(), u.Reactor, filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		const workers, block = 8, 4096
		var wg sync.WaitGroup
		var notified [workers]atomic.Int32
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				data := bytes.Repeat([]byte{byte('a' + w)}, block)
				if n, err := f.WriteAt(data, int64(w*block)); n != block || err != nil {
					t.Errorf("worker %d: WriteAt = %d, %v", w, n, err)
				}
				got := make([]byte, block)
				if n, err := f.ReadAt(got, int64(w*block)); n != block || err != nil || !bytes.Equal(got, data) {
					t.Errorf("worker %d: ReadAt = %d, %v", w, n, err)
				}
				q, err := f.ReadAsync(block, int64(w*block))
				if err != nil {
					t.Errorf("worker %d: ReadAsync: %v", w, err)
					return
				}
				event.Subscribe(q, func(_ event.Event, res any, err error) {
					if b, _ := res.([]byte); bytes.Equal(b, data) || errors.Is(err, event.ErrClosed) {
						notified[w].Add(1)
					}
				})
				q.Close() // races with its completion: one of the two is heard
			}()
		}
		wg.Wait() // a Close notifies in it, a completion before it
		for w := range workers {
			if n := notified[w].Load(); n != 1 {
				t.Errorf("worker %d's closed request was notified %d times, want once", w, n)
			}
		}
		uv.UvtMust(t, f.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// TestFSRequestInCoroutine awaits file requests from a cooperative
// coroutine on each driver: while one is in flight the reactor has work
// pending, so the coroutine's waits are never taken for a deadlock.
func TestFSRequestInCoroutine(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(path, []byte("from a coroutine"), 0o600))
		osf, err := os.OpenFile(path, os.O_RDWR, 0)
		uv.UvtMust(t, err)
		defer osf.Close()
		co, err := reactor.Spawn(context.Background(), u.Reactor, func(ctx context.Context) (string, error) {
			var got []byte
			for range 3 { // one wait after another
				q, err := uv.UvtFSRead(u.Reactor, osf.Fd()) // 64 bytes at 0
				if err != nil {
					return "", err
				}
				out, err := event.Await(ctx, event.Any(), q)
				if err == nil {
					err = out[0].Err
				}
				if err != nil {
					return "", err
				}
				got = out[0].Result.([]byte)
			}
			return string(got), nil
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, u.Run(context.Background()))
		got, err := event.AwaitValue[string](context.Background(), co)
		if got != "from a coroutine" || err != nil {
			t.Errorf("the coroutine returned %q, %v", got, err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// BenchmarkFileReadAt reads 4 KiB blocks through File.ReadAt on each
// driver, from a goroutine other than the loop's: the round trip of one
// request (submission, the pool, delivery on a loop turn).
func BenchmarkFileReadAt(b *testing.B) {
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) {
			r := uv.UvtNewReactorOn(b, d).Reactor
			defer r.Close()
			go r.Serve(context.Background())
			path := filepath.Join(b.TempDir(), "f")
			uv.UvtMust(b, os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o600))
			f, err := uv.OpenFile(context.Background(), r, path, os.O_RDONLY, 0)
			uv.UvtMust(b, err)
			defer f.Close()
			buf := make([]byte, 4096)
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.ReadAt(buf, int64(i%256)*4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
