package uv_test

import (
	"context"
	"os"
	"regexp"
	"sync"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The conformance rows of the system kinds (Signal, Process, Exec, Task,
// Thread). The one-shot kinds run from creation (NoStart); their Fire ends
// the work, which otherwise waits.

func TestConformSignal(t *testing.T) {
	conform.Run(t, conform.Kind{
		New:  func(r *reactor.Reactor) (event.Event, error) { return uv.NewSignal(r, syscall.SIGUSR2) },
		Fire: func(event.Event) error { return syscall.Kill(os.Getpid(), syscall.SIGUSR2) },
		Info: regexp.MustCompile(`^Signal\(signum=12\)$`),
	})
}

func TestConformProcess(t *testing.T) {
	child := uv.UvtFixture(t, "child.sh")
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			// cat until its input closes: the test's end closes it, so no
			// child outlives the test (Close does not kill a child).
			p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{child, "echo"}, Stdin: uv.StdioPipe})
			if err == nil {
				t.Cleanup(func() { p.Stdin().Close() })
			}
			return p, err
		},
		Fire:    func(ev event.Event) error { return ev.(*uv.Process).Kill(syscall.SIGTERM) },
		Info:    regexp.MustCompile(`^Process\(pid=\d+(, signal=15)?\)$`),
		OneShot: true,
		NoStart: true,
	})
}

func TestConformExec(t *testing.T) {
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.NewExec(r, "sleep 100", uv.ExecOptions{})
		},
		Fire:    func(ev event.Event) error { return syscall.Kill(-ev.(*uv.Exec).Pid(), syscall.SIGTERM) },
		Info:    regexp.MustCompile(`^Exec\(mode=exec, pid=\d+(, exit=-15)?\)$`),
		OneShot: true,
		NoStart: true,
	})
}

// gates holds, per task or thread of the table, the channel its function
// waits on until Fire closes it.
var gates sync.Map // event.Event → chan struct{}

// gated returns a function that waits for its gate (or its context) and
// the gate to register once the event exists.
func gated() (fn func(ctx context.Context) (any, error), gate chan struct{}) {
	gate = make(chan struct{})
	return func(ctx context.Context) (any, error) {
		select {
		case <-gate:
			return "opened", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, gate
}

func openGate(ev event.Event) error {
	if g, ok := gates.LoadAndDelete(ev); ok {
		close(g.(chan struct{}))
	}
	return nil
}

func TestConformTask(t *testing.T) {
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			fn, gate := gated()
			task, err := uv.QueueTask(r, fn)
			if err == nil {
				gates.Store(event.Event(task), gate)
			}
			return task, err
		},
		Fire:    openGate,
		Info:    regexp.MustCompile(`^Task\((queued|running|done|canceled)\)$`),
		OneShot: true,
		NoStart: true,
	})
}

func TestConformThread(t *testing.T) {
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			fn, gate := gated()
			th, err := uv.NewThread(r, fn)
			if err == nil {
				gates.Store(event.Event(th), gate)
			}
			return th, err
		},
		Fire:    openGate,
		Info:    regexp.MustCompile(`^Thread\((starting|tid=\d+, (running|done))\)$`),
		OneShot: true,
		NoStart: true,
	})
}
