// Package comingfrom_test runs every row and every code block of
// docs/coming-from.md: one subtest per idiom (Node/setTimeout, luv/timer
// again, asyncio/gather, ...), on each driver, asserting what the row says.
// Everything is bounded, on loopback, and stops by itself; the deadlines
// below only turn a hang into a failure.
package comingfrom_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// safety bounds every run and wait: a test that reaches it has hung.
const safety = 30 * time.Second

// drivers are the two drivers every row runs on.
var drivers = []reactor.Driver{reactor.DriverLibuv, reactor.DriverGo}

// eachDriver runs fn as a subtest per driver; the libuv one is skipped, with
// the reason, in a build without cgo.
func eachDriver(t *testing.T, fn func(t *testing.T, d reactor.Driver)) {
	t.Helper()
	for _, d := range drivers {
		t.Run(d.String(), func(t *testing.T) {
			r, err := reactor.New(reactor.Options{Driver: d})
			if errors.Is(err, reactor.ErrNoLibuv) {
				t.Skipf("the %s driver is not in this build: %v", d, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			fn(t, d)
		})
	}
}

// row runs one row of the page as subtest name, on each driver, with a new
// reactor closed at the end.
func row(t *testing.T, name string, fn func(t *testing.T, r *reactor.Reactor)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		eachDriver(t, func(t *testing.T, d reactor.Driver) {
			fn(t, newReactor(t, reactor.Options{Driver: d, Logger: testLogger(t)}))
		})
	})
}

// loopRow runs one row of the page that uses package loop.
func loopRow(t *testing.T, name string, fn func(t *testing.T, l *loop.Loop)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		eachDriver(t, func(t *testing.T, d reactor.Driver) {
			l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: d, Logger: testLogger(t)}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := l.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			fn(t, l)
		})
	})
}

// testLogger sends a reactor's reports (a deadlock a row provokes, say) to
// the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func newReactor(t *testing.T, opts reactor.Options) *reactor.Reactor {
	t.Helper()
	r, err := reactor.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// bounded is a context that ends at the safety bound.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	t.Cleanup(cancel)
	return ctx
}

// run drives r until nothing is left and fails the test on an error.
func run(t *testing.T, r *reactor.Reactor) {
	t.Helper()
	if err := r.Run(bounded(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// runLoop drives l until nothing is left and fails the test on an error.
func runLoop(t *testing.T, l *loop.Loop) {
	t.Helper()
	if err := l.Run(bounded(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// kill sends sig to this process; the caller watches sig already.
func kill(t *testing.T, sig syscall.Signal) {
	t.Helper()
	must(t, syscall.Kill(os.Getpid(), sig))
}

// socketPair returns a connected pair of Unix stream sockets: a descriptor
// for the loop, closed at the end of the test (unless keep is false: the
// caller hands it to something that closes it), and the peer as an
// *os.File, closed at the end of the test.
func socketPair(t *testing.T, keep bool) (fd int, peer *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	must(t, err)
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	if keep {
		t.Cleanup(func() { syscall.Close(fds[0]) })
	}
	peer = os.NewFile(uintptr(fds[1]), "peer")
	t.Cleanup(func() { peer.Close() })
	return fds[0], peer
}

// reports records what a reactor reports (Options.OnReport); it is used on
// the loop goroutine only.
type reports struct {
	msgs []string
	errs []error
}

func (rp *reports) add(_ event.Event, msg string, err error) {
	rp.msgs = append(rp.msgs, msg)
	rp.errs = append(rp.errs, err)
}

// coRun runs fn as a coroutine of r (reactor.Go), drives r until nothing is
// left, and returns what fn returned.
func coRun[T any](t *testing.T, r *reactor.Reactor, fn func(ctx context.Context) (T, error)) (T, error) {
	t.Helper()
	co, err := reactor.Go(bounded(t), r, fn)
	must(t, err)
	run(t, r)
	v, ok, err := co.Outcome()
	if !ok {
		t.Fatal("the coroutine has not finished when Run returned")
	}
	return v, err
}

// elsewhere runs fn in a goroutine the reactor does not run, declared to r
// with Hold until fn returns: a wait on what fn completes is then not taken
// for a deadlock.
func elsewhere(t *testing.T, r *reactor.Reactor, fn func()) {
	t.Helper()
	release, err := r.Hold()
	must(t, err)
	go func() {
		defer release()
		fn()
	}()
}

// timesOut awaits a future that never completes in time, bounded by Within
// and then beside an async.Timeout (asyncio's wait_for, Node's
// AbortSignal.timeout): each wait ends with ErrTimeout.
func timesOut(t *testing.T, r *reactor.Reactor) {
	t.Helper()
	f := event.NewFuture[int](r)
	_, err := coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
		return event.Await(ctx, event.Any().Within(5*time.Millisecond), f)
	})
	if !errors.Is(err, event.ErrTimeout) {
		t.Fatalf("Within = %v, want ErrTimeout", err)
	}
	_, err = coRun(t, r, func(ctx context.Context) ([]event.Outcome, error) {
		to, err := async.NewTimeout(r, 5*time.Millisecond)
		if err != nil {
			return nil, err
		}
		return event.Await(ctx, event.Any(), f, to)
	})
	if !errors.Is(err, event.ErrTimeout) {
		t.Fatalf("beside an async.Timeout = %v, want ErrTimeout", err)
	}
	f.Resolve(0)
}

// signalSays watches signum and more with one uv.Signal, sends sig to this
// process and runs drive: the signal event, closed by its first result,
// says sig.
func signalSays(t *testing.T, r *reactor.Reactor, drive func(), sig, signum syscall.Signal, more ...syscall.Signal) {
	t.Helper()
	s, err := uv.NewSignal(r, signum, more...)
	must(t, err)
	var got syscall.Signal
	s.OnSignal(func(sig syscall.Signal, err error) { got = sig; s.Close() })
	must(t, s.Start())
	kill(t, sig)
	drive()
	if got != sig {
		t.Fatalf("the signal event said %v, want %v", got, sig)
	}
}
