package uv_test

// The conformance table: every kind runs the same checks (internal/conform)
// on each driver, one row a kind, as libuv's test-list.h lists its tests.
// A row's function describes the kind, setting up on t what its events
// need (a peer to talk to, a fixture, a gated resolver).

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// conformKinds lists every kind at a glance.
var conformKinds = []struct {
	name string
	kind func(t *testing.T) conform.Kind
}{
	{"Trigger", conformTrigger},
	{"Timer", conformTimer},
	{"PeriodicTimer", conformPeriodicTimer},
	{"LibuvTimer", conformLibuvTimer},
	{"WorkRequest", conformWorkRequest},
	{"Listener", conformListener},
	{"IO", conformIO},
	{"Pipe", conformPipe},
	{"IPC", conformIPC},
	{"Poll", conformPoll},
	{"PollProxy", conformPollProxy},
	{"FSEvent", conformFSEvent},
	{"FSPoll", conformFSPoll},
	{"AddrInfo", conformAddrInfo},
	{"NameInfo", conformNameInfo},
	{"Signal", conformSignal},
	{"Process", conformProcess},
	{"Command", conformCommand},
	{"Task", conformTask},
	{"Thread", conformThread},
	{"UDP", conformUDP},
	{"TTY", conformTTY},
	{"FS", conformFS},
	{"Prepare", conformPhase("Prepare", uv.NewPrepare)},
	{"Check", conformPhase("Check", uv.NewCheck)},
	{"Idle", conformPhase("Idle", uv.NewIdle)},
	{"Future", conformFuture},
	{"Handoff", conformHandoff},
	{"Coroutine", conformCoroutine},
	{"Timeout", conformTimeout},
	{"ChannelRecv", conformChannelRecv},
	{"ChannelSend", conformChannelSend},
	{"PoolAcquire", conformPoolAcquire},
	{"Group", conformGroup},
	{"Scope", conformScope},
	{"Suspension", conformSuspension},
}

// TestConform runs each row of conformKinds as a subtest.
func TestConform(t *testing.T) {
	for _, row := range conformKinds {
		t.Run(row.name, func(t *testing.T) { conform.Run(t, row.kind(t)) })
	}
}

func conformTrigger(t *testing.T) conform.Kind {
	return conform.Kind{
		Name: "trigger",
		New:  func(r *reactor.Reactor) (event.Event, error) { return uv.NewTrigger(r) },
		Fire: func(ev event.Event) error { return ev.(*uv.Trigger).Send() },
		Detach: func(ev event.Event) func() error {
			target := event.Deref(ev)
			return func() error { return uv.UvtSend(target) }
		},
		Info: regexp.MustCompile(`^Trigger\(sent=\d+, fired=\d+\)$`),
	}
}

func conformTimer(t *testing.T) conform.Kind {
	return conform.Kind{
		New:            func(r *reactor.Reactor) (event.Event, error) { return r.NewTimer(time.Millisecond, 0) },
		Info:           regexp.MustCompile(`^Timer\(timeout=1ms\)$`),
		OneShot:        true,
		StopsWhenFired: true,
	}
}

func conformPeriodicTimer(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return r.NewTimer(time.Millisecond, time.Millisecond)
		},
		Info: regexp.MustCompile(`^Timer\(timeout=1ms, periodic\)$`),
	}
}

func conformLibuvTimer(t *testing.T) conform.Kind {
	return conform.Kind{
		Name: "libuv-timer",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.UvtNewLibuvTimer(r, time.Millisecond)
		},
		Info:       regexp.MustCompile(`^LibuvTimer\(timeout=1ms\)$`),
		NeedsLibuv: true,
	}
}

func conformWorkRequest(t *testing.T) conform.Kind {
	return conform.Kind{
		New:        func(r *reactor.Reactor) (event.Event, error) { return uv.UvtSubmitWork(r, time.Millisecond) },
		Info:       regexp.MustCompile(`^Work\(\)$`),
		OneShot:    true,
		NoStart:    true,
		NeedsLibuv: true,
	}
}

func conformListener(t *testing.T) conform.Kind {
	var mu sync.Mutex
	var clients []net.Conn
	t.Cleanup(func() {
		for _, c := range clients {
			c.Close()
		}
	})
	dial := func(addr string) error {
		c, err := net.Dial("tcp4", addr)
		mu.Lock()
		clients = append(clients, c)
		mu.Unlock()
		return err
	}
	return conform.Kind{
		Name: "listener",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.Listen(r, "tcp4", "127.0.0.1:0")
		},
		Fire: func(ev event.Event) error { return dial(ev.(*uv.Listener).Addr().String()) },
		Detach: func(ev event.Event) func() error {
			addr := ev.(*uv.Listener).Addr().String()
			return func() error { return dial(addr) }
		},
		Info: regexp.MustCompile(`^Listener\(tcp4 127\.0\.0\.1:\d+, accepted=\d+, failed=\d+\)$`),
	}
}

// conformIO runs a TCP connection through the table: its peer is a net
// connection, whose write makes the IO notify a read.
func conformIO(t *testing.T) conform.Kind {
	nl, err := net.Listen("tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	t.Cleanup(func() { nl.Close() })
	var mu sync.Mutex
	peers := map[string]net.Conn{}
	arrived := sync.NewCond(&mu)
	go func() {
		for {
			c, err := nl.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			peers[c.RemoteAddr().String()] = c
			arrived.Broadcast()
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range peers {
			c.Close()
		}
	})
	// poke writes to the peer of the IO whose local address is local.
	poke := func(local string) error {
		mu.Lock()
		defer mu.Unlock()
		for peers[local] == nil {
			arrived.Wait()
		}
		_, err := peers[local].Write([]byte("x"))
		return err
	}
	return conform.Kind{
		Name: "io",
		New: func(r *reactor.Reactor) (event.Event, error) {
			f, err := uv.DialAsync(r, "tcp4", nl.Addr().String())
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			defer cancel()
			for !f.Done() {
				if err := r.RunOnce(ctx); err != nil {
					return nil, err
				}
			}
			c, _, err := f.Outcome()
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Fire: func(ev event.Event) error { return poke(ev.(*uv.IO).LocalAddr().String()) },
		Detach: func(ev event.Event) func() error {
			local := ev.(*uv.IO).LocalAddr().String()
			return func() error { return poke(local) }
		},
		Info: regexp.MustCompile(`^IO\(tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+, in=\d+, out=\d+\)$`),
	}
}

// conformPipe runs one end of a socket pair through the table; the
// other end's writes make it notify. The other end lives as long as the
// first: it is closed when the first is collected.
func conformPipe(t *testing.T) conform.Kind {
	var mu sync.Mutex
	others := map[weak.Pointer[uv.IO]]*uv.IO{}
	send := func(key weak.Pointer[uv.IO]) error {
		mu.Lock()
		b := others[key]
		mu.Unlock()
		return b.Send([]byte("x"))
	}
	return conform.Kind{
		Name: "io",
		New: func(r *reactor.Reactor) (event.Event, error) {
			a, b, err := uv.Pipe(r)
			if err != nil {
				return nil, err
			}
			key := weak.Make(a)
			mu.Lock()
			others[key] = b
			mu.Unlock()
			runtime.AddCleanup(a, func(key weak.Pointer[uv.IO]) {
				mu.Lock()
				b := others[key]
				delete(others, key)
				mu.Unlock()
				go b.Close() // a cleanup must not wait for a loop
			}, key)
			return a, nil
		},
		Fire: func(ev event.Event) error { return send(weak.Make(ev.(*uv.IO))) },
		Detach: func(ev event.Event) func() error {
			key := weak.Make(ev.(*uv.IO))
			return func() error { return send(key) }
		},
		Info: regexp.MustCompile(`^IO\(unix \S*->\S*, in=\d+, out=\d+\)$`),
	}
}

// eventfdPoll makes a poll that owns a fresh eventfd.
func eventfdPoll(r *reactor.Reactor) (*uv.Poll, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, err
	}
	p, err := uv.NewPoll(r, fd, uv.Readable, uv.PollOptions{CloseFD: true})
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return p, nil
}

// fireEventfd makes the eventfd behind a poll readable.
func fireEventfd(p *uv.Poll) error { return detachEventfd(p)() }

// detachEventfd returns what makes the eventfd behind p readable, holding
// its number, not p.
func detachEventfd(p *uv.Poll) func() error {
	fd := p.FD()
	return func() error {
		_, err := unix.Write(fd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		return err
	}
}

func conformPoll(t *testing.T) conform.Kind {
	return conform.Kind{
		Name:   "poll",
		New:    func(r *reactor.Reactor) (event.Event, error) { return eventfdPoll(r) },
		Fire:   func(ev event.Event) error { return fireEventfd(ev.(*uv.Poll)) },
		Detach: func(ev event.Event) func() error { return detachEventfd(ev.(*uv.Poll)) },
		Info:   regexp.MustCompile(`^Poll\(fd=\d+, events=r\)$`),
	}
}

func conformPollProxy(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			p, err := eventfdPoll(r)
			if err != nil {
				return nil, err
			}
			return uv.NewPollProxy(p, uv.Readable)
		},
		Fire:   func(ev event.Event) error { return fireEventfd(ev.(*uv.PollProxy).Poll()) },
		Detach: func(ev event.Event) func() error { return detachEventfd(ev.(*uv.PollProxy).Poll()) },
		Info:   regexp.MustCompile(`^PollProxy\(fd=\d+, events=r\)$`),
	}
}

func conformFSEvent(t *testing.T) conform.Kind {
	root := t.TempDir()
	var n atomic.Int64
	return conform.Kind{
		Name: "fsevent",
		New: func(r *reactor.Reactor) (event.Event, error) {
			dir := filepath.Join(root, strconv.FormatInt(n.Add(1), 10))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			return uv.NewFSEvent(r, dir, uv.FSEventOptions{})
		},
		Fire: func(ev event.Event) error {
			return os.WriteFile(filepath.Join(ev.(*uv.FSEvent).Path(), "f"), nil, 0o600)
		},
		Detach: func(ev event.Event) func() error {
			dir := ev.(*uv.FSEvent).Path()
			return func() error { return os.WriteFile(filepath.Join(dir, "f"), nil, 0o600) }
		},
		Info: regexp.MustCompile(`^FSEvent\(path=".+"\)$`),
	}
}

func conformAddrInfo(t *testing.T) conform.Kind {
	g := newGatedResolver(t)
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return gate[*uv.AddrInfo](g, r)(uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{}))
		},
		Fire:    g.fire,
		Detach:  g.detach,
		Info:    regexp.MustCompile(`^AddrInfo\(host="localhost", service="", network=ip, (pending|closed|addrs=\d+)\)$`),
		OneShot: true,
		NoStart: true,
	}
}

func conformNameInfo(t *testing.T) conform.Kind {
	g := newGatedResolver(t)
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return gate[*uv.NameInfo](g, r)(uv.NewNameInfo(r, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{}))
		},
		Fire:    g.fire,
		Detach:  g.detach,
		Info:    regexp.MustCompile(`^NameInfo\(addr=127\.0\.0\.1:80, (pending|closed|host=".*", service=".*")\)$`),
		OneShot: true,
		NoStart: true,
	}
}

func conformSignal(t *testing.T) conform.Kind {
	return conform.Kind{
		New:  func(r *reactor.Reactor) (event.Event, error) { return uv.NewSignal(r, syscall.SIGUSR2) },
		Fire: func(event.Event) error { return syscall.Kill(os.Getpid(), syscall.SIGUSR2) },
		Detach: func(event.Event) func() error {
			return func() error { return syscall.Kill(os.Getpid(), syscall.SIGUSR2) }
		},
		Info: regexp.MustCompile(`^Signal\(signum=12\)$`),
	}
}

func conformProcess(t *testing.T) conform.Kind {
	child := uv.UvtFixture(t, "child.sh")
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			// cat until its input closes: the test's end closes it, so no
			// child outlives the test (Close does not kill a child).
			p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{child, "echo"}, Stdin: uv.StdioPipe})
			if err == nil {
				t.Cleanup(func() { p.Stdin().Close() })
			}
			return p, err
		},
		Fire: func(ev event.Event) error { return ev.(*uv.Process).Kill(syscall.SIGTERM) },
		Detach: func(ev event.Event) func() error {
			pid := ev.(*uv.Process).Pid()
			return func() error { return syscall.Kill(pid, syscall.SIGTERM) }
		},
		Info:    regexp.MustCompile(`^Process\(pid=\d+(, signal=15)?\)$`),
		OneShot: true,
		NoStart: true,
	}
}

func conformCommand(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.NewCommand(r, "sleep 100", uv.CommandOptions{})
		},
		Fire: func(ev event.Event) error { return syscall.Kill(-ev.(*uv.Command).Pid(), syscall.SIGTERM) },
		Detach: func(ev event.Event) func() error {
			pid := ev.(*uv.Command).Pid()
			return func() error { return syscall.Kill(-pid, syscall.SIGTERM) }
		},
		Info:    regexp.MustCompile(`^Command\(mode=CaptureLines, pid=\d+(, exit=-15)?\)$`),
		OneShot: true,
		NoStart: true,
	}
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

func openGate(ev event.Event) error { return detachGate(ev)() }

// detachGate takes the event's gate out of gates and returns what opens it.
func detachGate(ev event.Event) func() error {
	g, ok := gates.LoadAndDelete(ev)
	return func() error {
		if ok {
			close(g.(chan struct{}))
		}
		return nil
	}
}

func conformTask(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			fn, gate := gated()
			task, err := uv.QueueTask(r, fn)
			if err == nil {
				gates.Store(event.Event(task), gate)
			}
			return task, err
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    regexp.MustCompile(`^Task\((queued|running|done|canceled)\)$`),
		OneShot: true,
		NoStart: true,
	}
}

func conformThread(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			fn, gate := gated()
			th, err := uv.NewThread(r, fn)
			if err == nil {
				gates.Store(event.Event(th), gate)
			}
			return th, err
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    regexp.MustCompile(`^Thread\((starting|tid=\d+, (running|done))\)$`),
		OneShot: true,
		NoStart: true,
	}
}
