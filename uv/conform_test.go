package uv_test

import (
	"context"
	"errors"
	"math/rand/v2"
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

	"github.com/uvevent/uvevent/async"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// The conformance table: every kind runs the same checks (internal/conform)
// on each driver, one row a kind, as libuv's test-list.h lists its tests.
// A row's function describes the kind, setting up on t what its events
// need (a peer to talk to, a fixture, a gated resolver).

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
	{"UDPLane", conformUDPLane},
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
	fd, err := uv.UvtEventfd(true)
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

// The rows of package async's kinds. A channel's send and a pool's acquire
// are events (Ops). A Group, a Scope and a Suspension are not: their rows
// run the event a program gets from them and waits on, a coroutine the
// group or scope runs, and a goroutine suspended on the suspension.

// coroutineInfo matches a coroutine's Info (see reactor.Coroutine.Info).
var coroutineInfo = regexp.MustCompile(`^Goroutine \d+ spawned at \S+, \w+`)

// waitGate is a coroutine's function: it returns 1 once gate is closed
// (by openGate, or what detachGate returns: see gates), or its context's
// error.
func waitGate(gate chan struct{}) func(ctx context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		select {
		case <-gate:
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

func conformGroup(t *testing.T) conform.Kind {
	return gatedCoroutineKind(func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error) {
		grp, err := async.NewGroup[int](context.Background(), r, async.GroupOptions{})
		if err != nil {
			return nil, err
		}
		return grp.Go(fn)
	})
}

func conformScope(t *testing.T) conform.Kind {
	return gatedCoroutineKind(func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error) {
		s, err := async.NewScope(context.Background(), r)
		if err != nil {
			return nil, err
		}
		return async.Go(s, fn)
	})
}

// gatedCoroutineKind is the row of a coroutine that spawn starts on r (in a
// group, a scope) running fn, fired by opening its gate.
func gatedCoroutineKind(spawn func(r *reactor.Reactor, fn func(context.Context) (int, error)) (*reactor.Coroutine[int], error)) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			c, err := spawn(r, waitGate(gate))
			if err != nil {
				return nil, err
			}
			gates.Store(event.Event(c), gate)
			return c, nil
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    coroutineInfo,
		OneShot: true,
		NoStart: true,
	}
}

func conformSuspension(t *testing.T) conform.Kind {
	// The resume comes from the test's goroutine, which the reactor cannot
	// see: each suspension's reactor is held (Reactor.Hold) until it is
	// resumed, or the deadlock check could end the wait first.
	type suspended struct {
		s       *async.Suspension[int]
		release func()
	}
	var susps sync.Map // event.Event → suspended
	resume := func(v any, ok bool) func() error {
		return func() error {
			if !ok {
				return nil
			}
			sp := v.(suspended)
			defer sp.release()
			return sp.s.Resume(1)
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			s, err := async.NewSuspension[int](r)
			if err != nil {
				return nil, err
			}
			release, err := r.Hold()
			if err != nil {
				return nil, err
			}
			c, err := reactor.Go(context.Background(), r, s.Suspend)
			if err != nil {
				release()
				return nil, err
			}
			susps.Store(event.Event(c), suspended{s, release})
			return c, nil
		},
		Fire: func(ev event.Event) error { return resume(susps.LoadAndDelete(ev))() },
		Detach: func(ev event.Event) func() error {
			return resume(susps.LoadAndDelete(ev))
		},
		Info:    coroutineInfo,
		OneShot: true,
		NoStart: true,
	}
}

func conformChannelSend(t *testing.T) conform.Kind {
	var chans sync.Map // event.Event → *async.Channel[int]
	recv := func(ch any, ok bool) func() error {
		return func() error {
			if !ok {
				return nil
			}
			return ch.(*async.Channel[int]).Recv().Start()
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			ch, err := async.NewChannel[int](r, 0) // unbuffered: a send waits for a receiver
			if err != nil {
				return nil, err
			}
			op := ch.Send(1)
			chans.Store(event.Event(op), ch)
			return op, nil
		},
		Fire:    func(ev event.Event) error { return recv(chans.LoadAndDelete(ev))() },
		Detach:  func(ev event.Event) func() error { return recv(chans.LoadAndDelete(ev)) },
		Info:    regexp.MustCompile(`^Channel\.Send\(.*\)$`),
		OneShot: true,
	}
}

func conformPoolAcquire(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			p, err := async.NewPool(r, async.PoolOptions[int]{Max: 1, New: waitGate(gate)})
			if err != nil {
				return nil, err
			}
			op := p.Acquire() // completes once the pool has made its resource
			gates.Store(event.Event(op), gate)
			return op, nil
		},
		Fire:    openGate,
		Detach:  detachGate,
		Info:    regexp.MustCompile(`^Pool\.Acquire\(size=\d+/1, idle=\d+, waiting=\d+\)$`),
		OneShot: true,
	}
}

// The rows of the Go-owned kinds that no libuv handle stands behind: a
// future (resolved by Fire), a handoff (resolved by Fire, again and
// again), a coroutine (whose function returns when Fire
// opens its gate), a timeout (a timer that fires by itself) and a channel
// receive (which a send completes).

func conformFuture(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			// A refused future is born done with the reactor's error.
			f := event.NewFuture[int](r.Owner())
			if _, done, err := f.Outcome(); done {
				return nil, err
			}
			return f, nil
		},
		Fire:    func(ev event.Event) error { return ev.(*event.Future[int]).Resolve(1) },
		Info:    regexp.MustCompile(`^Future\(\w+\)$`),
		OneShot: true,
		NoStart: true,
		Skip: map[string]string{
			// A pending future with subscribers is held by its reactor
			// (reactor's held tests pin it), but nothing can
			// fire it once every reference is dropped: only a holder
			// resolves a future.
			"StartedIsKept": "only the future's holder can resolve it, and the check drops every reference",
		},
	}
}

func conformHandoff(t *testing.T) conform.Kind {
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			h, err := event.NewHandoff[int](r)
			if err != nil {
				return nil, err
			}
			return h, nil
		},
		Fire: func(ev event.Event) error { return ev.(*event.Handoff[int]).Resolve(1) },
		Info: regexp.MustCompile(`^Handoff\(empty\)$`),
		// Re-armable: a Resolve notifies and leaves it open, empty.
		NoStart: true,
		Skip: map[string]string{
			// A handoff with subscribers is held by its reactor (as a
			// pending future is), but only a holder of it can resolve it.
			"StartedIsKept": "only the handoff's holder can resolve it, and the check drops every reference",
		},
	}
}

func conformCoroutine(t *testing.T) conform.Kind {
	var gates sync.Map // event.Event → chan struct{}
	detach := func(ev event.Event) func() error {
		g, ok := gates.LoadAndDelete(ev)
		return func() error {
			if ok {
				close(g.(chan struct{}))
			}
			return nil
		}
	}
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			gate := make(chan struct{})
			co, err := reactor.Go(context.Background(), r, func(ctx context.Context) (int, error) {
				select {
				case <-gate:
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			})
			if err == nil {
				gates.Store(event.Event(co), gate)
			}
			return co, err
		},
		Fire:    func(ev event.Event) error { return detach(ev)() },
		Detach:  detach,
		Info:    regexp.MustCompile(`^Goroutine \d+ spawned at \S+, \w+`),
		OneShot: true,
		NoStart: true,
	}
}

func conformTimeout(t *testing.T) conform.Kind {
	return conform.Kind{
		New:            func(r *reactor.Reactor) (event.Event, error) { return async.NewTimeout(r, time.Millisecond) },
		Info:           regexp.MustCompile(`^Timeout\(1ms\)$`),
		OneShot:        true,
		StopsWhenFired: true,
		// Firing is what a timeout is for: its notification is its error.
		FiresWith: event.ErrTimeout,
	}
}

func conformChannelRecv(t *testing.T) conform.Kind {
	var chans sync.Map // event.Event → *async.Channel[int]
	return conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			ch, err := async.NewChannel[int](r, 1)
			if err != nil {
				return nil, err
			}
			op := ch.Recv()
			chans.Store(event.Event(op), ch)
			return op, nil
		},
		Fire: func(ev event.Event) error {
			ch, _ := chans.Load(ev)
			return ch.(*async.Channel[int]).Send(1).Start()
		},
		Detach: func(ev event.Event) func() error {
			ch, _ := chans.Load(ev)
			return func() error { return ch.(*async.Channel[int]).Send(1).Start() }
		},
		Info:    regexp.MustCompile(`^Channel\.Recv\(.*\)$`),
		OneShot: true,
	}
}

// Every method that waits, on both drivers, with a context cancelled before
// the call and with a short deadline, on something that cannot complete
// before the context ends: the wait ends with the context's error,
// errors.Is-able, and never with an empty success.

// waitRow is one waiting method: setup makes what it waits for pending (on
// the served reactor u) and returns the wait.
type waitRow struct {
	name  string
	setup func(t *testing.T, u *uv.UvtReactor) (wait func(ctx context.Context) error)
}

// blockedResolver holds every lookup of the pure-Go driver until its
// context ends.
type blockedResolver struct{}

func (blockedResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockedResolver) LookupPort(ctx context.Context, _, _ string) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

func (blockedResolver) LookupAddr(ctx context.Context, _ string) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// holdLookups keeps every lookup on u in flight until the test ends: the
// resolver blocks until the lookup's context ends (both drivers ask Go's
// resolver).
func holdLookups(t *testing.T, u *uv.UvtReactor) {
	uv.UvtSetResolver(t, blockedResolver{})
}

// pendingFuture is a future of u nobody resolves.
func pendingFuture(u *uv.UvtReactor) *event.Future[int] {
	return event.NewFuture[int](u.Reactor.Owner())
}

// stuckCoroutine is a coroutine of u waiting on a future nobody resolves,
// whatever its context says.
func stuckCoroutine(t *testing.T, u *uv.UvtReactor) *reactor.Coroutine[int] {
	f := pendingFuture(u)
	c, err := reactor.Go(context.Background(), u.Reactor, func(context.Context) (int, error) {
		return f.Await(context.Background())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Resolve(0) })
	return c
}

func waitRows() []waitRow {
	ignore := func(_ any, err error) error { return err }
	return []waitRow{
		{"event.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.Await(ctx, event.Any(), f)) }
		}},
		{"event.Await All", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f, g := pendingFuture(u), pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.Await(ctx, event.All(), f, g)) }
		}},
		{"event.AwaitValue", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.AwaitValue[int](ctx, f)) }
		}},
		{"event.AwaitAll", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(event.AwaitAll[int](ctx, f)) }
		}},
		{"event.AwaitFirst", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { _, _, err := event.AwaitFirst[int](ctx, f); return err }
		}},
		{"Future.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			f := pendingFuture(u)
			return func(ctx context.Context) error { return ignore(f.Await(ctx)) }
		}},
		{"Coroutine.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c := stuckCoroutine(t, u)
			return func(ctx context.Context) error { return ignore(c.Await(ctx)) }
		}},
		{"reactor.Spawn result", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			return spawnResult(t, u, reactor.Spawn[int])
		}},
		{"reactor.Go result", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			return spawnResult(t, u, reactor.Go[int])
		}},
		{"AddrInfo.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			holdLookups(t, u)
			a, err := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
				addrs, err := a.Await(ctx)
				if err == nil {
					t.Errorf("AddrInfo.Await = %v, nil", addrs)
				}
				return err
			}
		}},
		{"NameInfo.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			holdLookups(t, u)
			n, err := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(n.Await(ctx)) }
		}},
		{"FSRequest.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			q := blockedFIFORead(t, u)
			return func(ctx context.Context) error {
				b, err := q.Await(ctx)
				if err == nil {
					t.Errorf("FSRequest.Await = %q, nil", b)
				}
				return err
			}
		}},
		{"Task.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			task, err := uv.QueueTaskIn(taskPool(t), u.Reactor, func(context.Context) (int, error) { <-release; return 1, nil })
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(task.Await(ctx)) }
		}},
		{"Thread.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			th, err := uv.NewThread(u.Reactor, func(context.Context) (int, error) { <-release; return 1, nil })
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(th.Await(ctx)) }
		}},
		{"Process.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{"sleep", "30"}, KillOnClose: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return func(ctx context.Context) error { return ignore(p.Await(ctx)) }
		}},
		{"Command.Await", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := uv.NewCommand(u.Reactor, "sleep 30", uv.CommandOptions{Grace: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return func(ctx context.Context) error { return ignore(c.Await(ctx)) }
		}},
		{"Listener.AcceptIO", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			ln, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return func(ctx context.Context) error { return ignore(ln.AcceptIO(ctx)) }
		}},
		{"IPC.Receive", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			fds, err := uv.UvtSocketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Close(fds[1]) })
			p, err := uv.OpenIPC(u.Reactor, fds[0])
			if err != nil {
				syscall.Close(fds[0])
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return func(ctx context.Context) error { return ignore(p.Receive(ctx)) }
		}},
		{"OpenFile", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			fifo := filepath.Join(t.TempDir(), "fifo") // an open that blocks until a writer comes
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					f.Close()
				}
			})
			return func(ctx context.Context) error {
				f, err := uv.OpenFile(ctx, u.Reactor, fifo, os.O_RDONLY, 0)
				if err == nil {
					f.Close()
				}
				return err
			}
		}},
		{"Channel.Recv", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := async.NewChannel[int](u.Reactor, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(c.Recv().Await(ctx)) }
		}},
		{"Channel.Send", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			c, err := async.NewChannel[int](u.Reactor, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(c.Send(1).Await(ctx)) }
		}},
		{"Pool.Acquire", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			p, err := async.NewPool(u.Reactor, async.PoolOptions[int]{Max: 1, New: func(context.Context) (int, error) { return 1, nil }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			if _, err := p.Acquire().Await(waitCtx(t)); err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(p.Acquire().Await(ctx)) }
		}},
		{"Suspension.Suspend", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s, err := async.NewSuspension[int](u.Reactor)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error { return ignore(s.Suspend(ctx)) }
		}},
		{"loop.Suspension", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			l, err := loop.New(loop.Options{Reactor: u.Reactor})
			if err != nil {
				t.Fatal(err)
			}
			s := l.Suspension()
			return func(ctx context.Context) error { return ignore(s.Suspend(ctx)) }
		}},
		{"Group.Wait", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { return ignore(g.Wait(ctx)) }
		}},
		{"Group.WaitAny", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { _, _, err := g.WaitAny(ctx); return err }
		}},
		{"Group.WaitN", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			g := stuckGroup(t, u)
			return func(ctx context.Context) error { return ignore(g.WaitN(ctx, 1)) }
		}},
		{"Scope.Wait", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s := stuckScope(t, u)
			return func(ctx context.Context) error { return s.Wait(ctx) }
		}},
		{"Scope.Close", func(t *testing.T, u *uv.UvtReactor) func(context.Context) error {
			s := stuckScope(t, u)
			return func(ctx context.Context) error { return s.Close(ctx) }
		}},
	}
}

// spawnResult spawns, with the wait's context, a coroutine that waits with
// that context on a future nobody resolves: its result is the context's
// error. A started timer of an hour keeps the reactor from reporting the
// wait as a deadlock (a context's deadline does not count as a way out).
func spawnResult(t *testing.T, u *uv.UvtReactor, spawn func(context.Context, *reactor.Reactor, func(context.Context) (int, error)) (*reactor.Coroutine[int], error)) func(context.Context) error {
	f := pendingFuture(u)
	tm, err := u.NewTimer(time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Close() })
	return func(ctx context.Context) error {
		c, err := spawn(ctx, u.Reactor, func(ctx context.Context) (int, error) { return f.Await(ctx) })
		if err != nil {
			return err
		}
		_, err = c.Await(waitCtx(t))
		return err
	}
}

func stuckGroup(t *testing.T, u *uv.UvtReactor) *async.Group[int] {
	g, err := async.NewGroup[int](context.Background(), u.Reactor, async.GroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := pendingFuture(u)
	t.Cleanup(func() { f.Resolve(0) })
	if _, err := g.Go(func(context.Context) (int, error) { return f.Await(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	return g
}

func stuckScope(t *testing.T, u *uv.UvtReactor) *async.Scope {
	s, err := async.NewScope(context.Background(), u.Reactor)
	if err != nil {
		t.Fatal(err)
	}
	f := pendingFuture(u)
	t.Cleanup(func() { f.Resolve(0) })
	if _, err := async.Go(s, func(context.Context) (int, error) { return f.Await(context.Background()) }); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWaitEndsWithItsContext(t *testing.T) {
	ends := []struct {
		name string
		ctx  func(t *testing.T) context.Context
		want error
	}{
		{"cancelled before", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
		{"short deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond) // the row cannot complete by then
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
	}
	for _, row := range waitRows() {
		t.Run(row.name, func(t *testing.T) {
			for _, end := range ends {
				t.Run(end.name, func(t *testing.T) {
					uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
						uv.UvtServe(t, u)
						wait := row.setup(t, u)
						if err := wait(end.ctx(t)); !errors.Is(err, end.want) {
							t.Errorf("%s = %v, want an error matching %v", row.name, err, end.want)
						}
					})
				})
			}
		})
	}
}

// The loop's own waits: Run, RunOnce and Serve, with a started timer of an
// hour keeping the loop busy (RunNoWait, which does not wait, is pinned in
// reactor's run tests; Shutdown's bound by the file and command tests).
func TestRunEndsWithItsContext(t *testing.T) {
	runs := []struct {
		name string
		run  func(r *reactor.Reactor, ctx context.Context) error
	}{
		{"Run", (*reactor.Reactor).Run},
		{"RunOnce", (*reactor.Reactor).RunOnce},
		{"Serve", (*reactor.Reactor).Serve},
	}
	for _, run := range runs {
		for _, end := range []struct {
			name   string
			cancel bool
			want   error
		}{{"cancelled before", true, context.Canceled}, {"short deadline", false, context.DeadlineExceeded}} {
			t.Run(run.name+"/"+end.name, func(t *testing.T) {
				uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
					tm, err := u.Reactor.NewTimer(time.Hour, 0)
					if err != nil {
						t.Fatal(err)
					}
					if err := tm.Start(); err != nil {
						t.Fatal(err)
					}
					defer tm.Close()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					defer cancel()
					if end.cancel {
						cancel()
					}
					if err := run.run(u.Reactor, ctx); !errors.Is(err, end.want) {
						t.Errorf("%s = %v, want an error matching %v", run.name, err, end.want)
					}
				})
			})
		}
	}
}

// Dial with a context cancelled before the call does not connect: it
// returns the context's error. (A short deadline is not in the table: a
// local connect completes before any deadline a test could rely on.)
func TestDialCancelledBeforeDoesNotConnect(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ln, err := uv.Listen(u.Reactor, "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, err := uv.Dial(ctx, u.Reactor, "tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Dial with a cancelled context = %v, want context.Canceled", err)
		}
	})
}

// taskPool is a task pool of one worker for one test: the default pool may
// be busy with other tests' work.
func taskPool(t *testing.T) *uv.TaskPool {
	p, err := uv.NewTaskPool(1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The loop contract every kind relies on (docs/architecture.md §2), proven
// through real libuv state: a libuv timer and a thread-pool request built
// with the kind kit (testkind_test.go).

// libuv's next timeout is an absolute deadline: work posted from another
// goroutine every few milliseconds wakes the parked loop again and again,
// and the libuv timer still fires when due.
func TestLibuvDeadlineSurvivesWakeUps(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	tm, err := uv.UvtNewLibuvTimer(u.Reactor, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var fired atomic.Bool
	event.Subscribe(tm, func(event.Event, any, error) { fired.Store(true) })
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	stop := uv.UvtServe(t, u)
	posts := 0
	for !fired.Load() {
		if posts++; posts > 250 { // 5 s of posts for a 100 ms timer
			t.Fatalf("libuv timer of 100 ms not fired after %d posts 20 ms apart", posts)
		}
		u.Post(func() {})
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	tm.Close()
	uv.UvtShutdown(t, u, false)
}

// A libuv timer started after the loop was parked a while counts its
// timeout from the start: the shim refreshes libuv's clock first.
func TestLibuvTimerCountsFromStart(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	tm, err := uv.UvtNewLibuvTimer(u.Reactor, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	event.Subscribe(tm, func(event.Event, any, error) { done <- time.Now() })
	stop := uv.UvtServe(t, u)
	time.Sleep(50 * time.Millisecond) // the loop parks; libuv's clock is not read
	start := time.Now()
	if err := tm.Start(); err != nil {
		t.Fatal(err)
	}
	// libuv's clock is CLOCK_MONOTONIC_COARSE here when that ticks every
	// millisecond: allow its one tick, no more.
	if got := uv.UvtRecv(t, done, "the libuv timer").Sub(start); got < 19*time.Millisecond {
		t.Fatalf("a 20 ms libuv timer fired %v after Start", got)
	}
	stop()
	tm.Close()
	uv.UvtShutdown(t, u, false)
}

// Reactor timers never fire before their timeout has passed since Start on
// the monotonic clock, whether started from a callback after long work or
// from another goroutine while the loop parks.
func TestTimersNeverEarly(t *testing.T) {
	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	const n = 2000
	type span struct{ start, fired time.Time }
	spans := make([]span, n)
	timeouts := make([]time.Duration, n)
	var left atomic.Int64
	left.Store(n)
	all := make(chan struct{})
	for i := range n {
		timeouts[i] = time.Duration(rand.Int64N(int64(20 * time.Millisecond)))
		tm, err := u.Reactor.NewTimer(timeouts[i], 0)
		if err != nil {
			t.Fatal(err)
		}
		event.Subscribe(tm, func(event.Event, any, error) {
			spans[i].fired = time.Now()
			if left.Add(-1) == 0 {
				close(all)
			}
		})
		u.Call(func() {
			if i%100 == 0 {
				busy(2 * time.Millisecond) // the turn's cached clock goes stale
			}
			spans[i].start = time.Now()
			tm.Start()
		})
	}
	uv.UvtRecv(t, all, "every timer")
	stop()
	early := 0
	for i, s := range spans {
		if s.fired.Sub(s.start) < timeouts[i] {
			early++
		}
	}
	if early > 0 {
		t.Fatalf("%d of %d timers fired before their timeout", early, n)
	}
	uv.UvtShutdown(t, u, false)
}

func busy(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// A request in flight keeps Run going, is no deadlock, and completes with
// its result.
func TestRequestKeepsRunAlive(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	w, err := uv.UvtSubmitWork(u.Reactor, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	event.Subscribe(w, func(_ event.Event, res any, err error) { got = res })
	co, err := reactor.Spawn(context.Background(), u.Reactor, func(ctx context.Context) (any, error) {
		_, err := event.Await(ctx, event.Any(), w)
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got != "done" {
		t.Fatalf("request result = %v, want done (Run returned before it completed)", got)
	}
	if _, _, err := co.Outcome(); err != nil {
		t.Fatalf("coroutine awaiting a request in flight: %v", err)
	}
	uv.UvtShutdown(t, u, false)
}

// Close waits, without spinning, for requests in flight; those not started
// are cancelled; every subscriber hears ErrClosed; nothing is left.
func TestCloseWaitsForRequests(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	u := uv.UvtNewReactor(t)
	var errs [6]error
	for i := range errs {
		w, err := uv.UvtSubmitWork(u.Reactor, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		event.Subscribe(w, func(_ event.Event, _ any, err error) { errs[i] = err })
	}
	before := u.Stats().Iterations
	if err := u.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, err := range errs {
		if !errors.Is(err, event.ErrClosed) {
			t.Errorf("request %d: %v, want ErrClosed", i, err)
		}
	}
	if s := u.Stats(); s.CHandles != 0 || s.Iterations-before > 10 {
		t.Fatalf("after Close: %+v (iterations since: %d)", s, s.Iterations-before)
	}
}

// Close ends whatever callbacks do: a callback that answers ErrClosed by
// starting a new timer or creating a trigger is refused.
func TestCloseRefusesNewWorkFromCallbacks(t *testing.T) {
	u := uv.UvtNewReactor(t)
	var timerErr, triggerErr, startErr error
	tm, _ := u.Reactor.NewTimer(time.Hour, 0)
	event.Subscribe(tm, func(event.Event, any, error) {
		next, err := u.Reactor.NewTimer(time.Millisecond, 0)
		timerErr = err
		if next != nil {
			startErr = next.Start()
		}
		_, triggerErr = uv.NewTrigger(u.Reactor)
	})
	tm.Start()
	tr, _ := uv.NewTrigger(u.Reactor)
	event.Subscribe(tr, func(event.Event, any, error) { startErr = errors.Join(startErr, tm.Start()) })
	tr.Start()
	if err := u.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, err := range map[string]error{"NewTimer": timerErr, "NewTrigger": triggerErr} {
		if !errors.Is(err, reactor.ErrReactorClosed) {
			t.Errorf("%s during Close = %v, want ErrReactorClosed", name, err)
		}
	}
	if startErr != nil && !errors.Is(startErr, reactor.ErrReactorClosed) && !errors.Is(startErr, event.ErrClosed) {
		t.Errorf("Start during Close = %v", startErr)
	}
	if s := u.Stats(); s.CHandles != 0 || s.Timers != 0 {
		t.Fatalf("left after Close: %+v", s)
	}
}

// Close from another goroutine while Serve runs stops the loop, waits for
// it and closes: graceful shutdown in one call.
func TestCloseWhileServing(t *testing.T) {
	u := uv.UvtNewReactor(t)
	tr, _ := uv.NewTrigger(u.Reactor)
	tr.Start()
	served := make(chan error, 1)
	go func() { served <- u.Serve(context.Background()) }()
	uv.UvtWaitFor(t, "the loop to run", func() bool { return u.Stats().Running })
	if err := u.Close(); err != nil {
		t.Fatalf("Close while serving: %v", err)
	}
	if err := uv.UvtRecv(t, served, "Serve to return"); err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	if err := tr.Send(); !errors.Is(err, event.ErrClosed) {
		t.Fatalf("Send after Close = %v, want ErrClosed", err)
	}
}

// Shutdown's context bounds the wait for a run that does not stop; the
// reactor stays open for a later Close.
func TestShutdownContextBoundsTheWait(t *testing.T) {
	u := uv.UvtNewReactor(t)
	release, entered := make(chan struct{}), make(chan struct{})
	tr, _ := uv.NewTrigger(u.Reactor)
	event.Subscribe(tr, func(_ event.Event, _ any, err error) {
		if err == nil {
			close(entered)
			<-release
		}
	})
	tr.Start()
	stop := uv.UvtServe(t, u)
	tr.Send()
	uv.UvtRecv(t, entered, "the callback to block")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := u.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a stuck callback = %v, want DeadlineExceeded", err)
	}
	close(release)
	stop()
	tr.Close()
	uv.UvtShutdown(t, u, false)
}

// A Stop ends exactly one run; a run on a reactor whose only events are
// hidden returns without firing them.
func TestStopEndsOneRunAndHiddenRunsNothing(t *testing.T) {
	u := uv.UvtNewReactor(t)
	u.Stop()
	if err := u.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	fired := false
	tm, _ := u.Reactor.NewTimer(time.Millisecond, 0)
	event.Subscribe(tm, func(event.Event, any, error) { fired = true })
	tm.Start()
	if err := u.Run(context.Background()); err != nil || !fired {
		t.Fatalf("Run after a spent Stop = %v, fired = %v; want the timer fired", err, fired)
	}
	hidden, _ := u.Reactor.NewTimer(0, 0)
	hidden.SetHidden(true)
	hiddenFired := false
	event.Subscribe(hidden, func(event.Event, any, error) { hiddenFired = true })
	hidden.Start()
	if err := u.Run(context.Background()); err != nil || hiddenFired {
		t.Fatalf("Run with only a hidden timer = %v, fired = %v; want it not run", err, hiddenFired)
	}
	hidden.Close()
	uv.UvtShutdown(t, u, false)
}

// The reactor exposes a counter of cgo crossings in its stats.
// Creating and closing a libuv handle crosses into the shim, so the count
// cannot stay zero.
func TestStatsCountCrossings(t *testing.T) {
	uv.UvtNeedsLibuv(t)
	r := uv.UvtNewReactorOn(t, reactor.DriverLibuv).Reactor
	defer r.Close()
	tr, err := uv.NewTrigger(r)
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if got := r.Stats().Crossings; got == 0 {
		t.Fatalf("Stats().Crossings = 0 after a handle was created and closed through the shim")
	}
}
