package uv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The storm's size: signals sent, goroutines allocating meanwhile.
const (
	stormSignals    = 50_000
	stormAllocators = 8
)

// stormListener is one event of the storm and what it heard.
type stormListener struct {
	name string
	sig  syscall.Signal
	n    atomic.Int64
}

func init() { uv.UvtRegisterChild("signal-storm", signalStorm) }

// signalStorm is the child process of TestSignalStorm. Two reactors, five
// Signal events on SIGUSR1 and SIGUSR2 and an os/signal channel on SIGUSR1
// listen while eight goroutines allocate, another runs the collector, and
// the main goroutine sends stormSignals signals, to the process and to
// single threads of it (so that they land on goroutine stacks, in Go code
// and in syscalls alike). Then one last signal of each kind must reach
// every listener: no listener may have fallen off. It prints one line per
// listener, "name=count", and exits 0 if all went well.
func signalStorm() int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", a...)
		return 1
	}
	var rs [2]*reactor.Reactor
	for i := range rs {
		// A child process has no testing.T for UvtNewReactorOn; it reports by
		// its output and exit status.
		r, err := reactor.New(reactor.Options{})
		if err != nil {
			return fail("reactor.New: %v", err)
		}
		rs[i] = r
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var listeners []*stormListener
	var events []*uv.Signal
	add := func(r *reactor.Reactor, name string, sig syscall.Signal) error {
		l := &stormListener{name: name, sig: sig}
		s, err := uv.NewSignal(r, sig)
		if err != nil {
			return err
		}
		event.Subscribe(s, func(event.Event, any, error) { l.n.Add(1) })
		listeners, events = append(listeners, l), append(events, s)
		return s.Start()
	}
	for i, spec := range []struct {
		r   int
		sig syscall.Signal
	}{{0, syscall.SIGUSR1}, {0, syscall.SIGUSR1}, {0, syscall.SIGUSR2}, {1, syscall.SIGUSR1}, {1, syscall.SIGUSR2}} {
		if err := add(rs[spec.r], fmt.Sprintf("r%d.%s.%d", spec.r, unix.SignalName(spec.sig), i), spec.sig); err != nil {
			return fail("listener %d: %v", i, err)
		}
	}
	notified := &stormListener{name: "os-signal.SIGUSR1", sig: syscall.SIGUSR1}
	listeners = append(listeners, notified)
	theirs := make(chan os.Signal, 1)
	signal.Notify(theirs, syscall.SIGUSR1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-theirs:
				notified.n.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()
	served := make(chan error, len(rs))
	for _, r := range rs {
		go func() { served <- r.Serve(ctx) }()
	}
	for range stormAllocators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var keep [][]byte
			for i := 0; ctx.Err() == nil; i++ {
				keep = append(keep, make([]byte, 64+i%4096))
				if len(keep) > 256 {
					keep = keep[:0]
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			runtime.GC()
		}
	}()

	pid := os.Getpid()
	for i := range stormSignals {
		sig := syscall.SIGUSR1
		if i%4 == 3 {
			sig = syscall.SIGUSR2
		}
		if i%8 == 0 {
			if tids := threads(); len(tids) > 0 {
				unix.Tgkill(pid, tids[rand.IntN(len(tids))], sig)
				continue
			}
		}
		if err := syscall.Kill(pid, sig); err != nil {
			return fail("kill: %v", err)
		}
	}
	// The last round: every listener must hear a signal sent after the
	// storm, so none fell off on the way.
	before := make([]int64, len(listeners))
	for i, l := range listeners {
		before[i] = l.n.Load()
	}
	deadline := time.Now().Add(uv.UvtSafety)
	for i, l := range listeners {
		for l.n.Load() == before[i] {
			if time.Now().After(deadline) {
				return fail("listener %s heard nothing after the storm", l.name)
			}
			syscall.Kill(pid, l.sig)
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	for range rs {
		<-served
	}
	wg.Wait()
	signal.Stop(theirs)
	for _, s := range events {
		s.Close()
	}
	for _, r := range rs {
		if err := r.Close(); err != nil {
			return fail("reactor Close: %v", err)
		}
	}
	if n := uv.UvtSignalLines(); n != 0 {
		return fail("dispatcher lines = %d at the end, want 0", n)
	}
	for _, l := range listeners {
		fmt.Printf("%s=%d\n", l.name, l.n.Load())
	}
	return 0
}

// threads lists the process's thread ids.
func threads() []int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// A storm of signals while goroutines allocate and the collector runs: the
// process survives, and every listener (Signal events on two reactors, an
// os/signal channel beside them) was notified, during the storm and after
// it. Deliveries coalesce, so the counts are at most the signals sent.
func TestSignalStorm(t *testing.T) {
	out := uv.UvtRunChild(t, "signal-storm")
	lines := strings.Fields(out)
	if len(lines) != 6 {
		t.Fatalf("child printed %q, want 6 listener counts", out)
	}
	for _, line := range lines {
		name, count, _ := strings.Cut(line, "=")
		n, err := strconv.Atoi(count)
		if err != nil || n < 2 || n > stormSignals+1000 {
			t.Errorf("listener %s heard %q notifications, want between 2 and about %d", name, count, stormSignals)
		}
	}
	t.Logf("notifications per listener (of %d signals, coalesced): %s", stormSignals, strings.Join(lines, " "))
}
