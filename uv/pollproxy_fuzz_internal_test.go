package uv

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
)

// fuzzDrivers lists the drivers this build can run (conform.Available):
// libuv's when cgo links it in, and the pure-Go one always. A fuzz target
// loops over them itself: its inputs run without subtests.
func fuzzDrivers() []reactor.Driver {
	var ds []reactor.Driver
	for _, d := range conform.Drivers {
		if conform.Available(d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// proxyModel is the reference for the poll-proxy rules: the mask the
// poll polls for is the union of the started proxies' events while any
// proxy exists, the poll's own events otherwise, and nothing while neither
// the poll nor a proxy is started.
type proxyModel struct {
	own      PollEvents
	userRefs int          // the poll's own Starts
	proxies  []PollEvents // events of each proxy made
	refs     []int        // Starts each proxy holds
	closed   []bool
	// stale: a proxy was made since the mask was last recomputed. Making
	// a proxy does not recompute it (only a proxy's Start, last Stop and
	// Close do, as PollProxy's rules say), so until then the poll may
	// still poll for more than the model's mask, never for less.
	stale bool
}

func (m *proxyModel) mask() PollEvents {
	exist, anyStarted := false, false
	var union PollEvents
	for i := range m.proxies {
		if m.closed[i] {
			continue
		}
		exist = true
		if m.refs[i] > 0 {
			anyStarted = true
			union |= m.proxies[i]
		}
	}
	if m.userRefs == 0 && !anyStarted {
		return 0
	}
	if !exist {
		return m.own
	}
	return union
}

// runPollProxyFuzz plays one input on a reactor of driver d: each pair of
// bytes is an operation and its argument; after each the mask polled for
// is compared with the model, and on "turn" the deliveries are checked.
func runPollProxyFuzz(t *testing.T, d reactor.Driver, data []byte) {
	u := UvtNewReactorOn(t, d)
	r := u.Reactor
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	own := PollEvents(data[0]%3 + 1) // Readable, Writable or both
	data = data[1:]
	p, err := NewPoll(r, fds[0], own, PollOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := &proxyModel{own: own}
	var xs []*PollProxy
	told := map[int]PollEvents{} // proxy index (-1: the poll) → results this turn
	record := func(i int) *event.Callback {
		return event.NewCallback(func(_ event.Event, res any, err error) {
			if err != nil && !errors.Is(err, event.ErrClosed) {
				t.Errorf("subscriber %d told error %v", i, err)
			}
			if err == nil {
				told[i] |= res.(PollEvents)
			}
		})
	}
	if err := p.AddCallback(record(-1)); err != nil {
		t.Fatal(err)
	}
	readable := false
	for step := 0; len(data) >= 2 && !t.Failed(); step++ {
		op, arg := data[0]%8, int(data[1])
		data = data[2:]
		i := -1
		if len(xs) > 0 {
			i = arg % len(xs)
		}
		what := fmt.Sprintf("step %d op %d arg %d", step, op, arg)
		switch op {
		case 0: // a new proxy
			if len(xs) == 6 {
				break
			}
			evs := PollEvents(arg%3 + 1)
			x, err := NewPollProxy(p, evs)
			if err != nil {
				t.Fatalf("%s: NewPollProxy: %v", what, err)
			}
			if err := x.AddCallback(record(len(xs))); err != nil {
				t.Fatalf("%s: AddCallback: %v", what, err)
			}
			xs = append(xs, x)
			m.proxies = append(m.proxies, evs)
			m.refs = append(m.refs, 0)
			m.closed = append(m.closed, false)
			m.stale = true
		case 1, 2: // start a proxy
			if i < 0 {
				break
			}
			err := xs[i].Start()
			if m.closed[i] {
				if !errors.Is(err, event.ErrClosed) {
					t.Errorf("%s: Start of closed proxy %d = %v, want ErrClosed", what, i, err)
				}
				break
			}
			if err != nil {
				t.Fatalf("%s: Start proxy %d: %v", what, i, err)
			}
			m.refs[i]++
			m.stale = false
		case 3: // stop a proxy
			if i < 0 {
				break
			}
			xs[i].Stop()
			if m.refs[i] > 0 {
				if m.refs[i]--; m.refs[i] == 0 {
					m.stale = false
				}
			}
		case 4: // close a proxy
			if i < 0 {
				break
			}
			if !m.closed[i] {
				m.stale = false
			}
			xs[i].Close()
			m.closed[i], m.refs[i] = true, 0
		case 5: // the poll's own Start or Stop
			if arg%2 == 0 {
				if err := p.Start(); err != nil {
					t.Fatalf("%s: poll Start: %v", what, err)
				}
				m.userRefs++
			} else if m.userRefs > 0 {
				// Only a Start of the user's own is stopped: the poll's
				// Stop cannot tell the user's Starts from the proxies'
				// (TestPollStopByNonStarterLeavesProxies).
				p.Stop()
				m.userRefs--
			}
		case 6: // make the descriptor readable, or drain it
			if arg%2 == 0 {
				unix.Write(fds[1], []byte{byte(arg)})
				readable = true
			} else {
				var b [256]byte
				for {
					if n, _ := unix.Read(fds[0], b[:]); n <= 0 {
						break
					}
				}
				readable = false
			}
		case 7: // a turn: check who was told what
			clear(told)
			want := map[int]PollEvents{}
			ready := Writable
			if readable {
				ready |= Readable
			}
			if m.mask()&ready != 0 {
				exist := false
				for j := range xs {
					if m.closed[j] {
						continue
					}
					exist = true
					if m.refs[j] > 0 && m.proxies[j]&ready != 0 {
						want[j] = m.proxies[j] & ready
					}
				}
				if !exist && m.userRefs > 0 {
					want[-1] = own & ready
				}
			}
			// Level-triggered: turn until everyone due was told. With
			// nobody due, one short turn shows whether anyone is told
			// wrongly; its bound decides nothing.
			for {
				limit := 30 * time.Second
				if len(want) == 0 {
					limit = 2 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				err := r.RunOnce(ctx)
				cancel()
				if len(want) == 0 {
					break
				}
				if err != nil {
					t.Fatalf("%s: RunOnce: %v (want %v told, told %v)", what, err, want, told)
				}
				done := true
				for j := range want {
					if told[j] == 0 {
						done = false
					}
				}
				if done {
					break
				}
			}
			for j, got := range told {
				w, ok := want[j]
				if !ok {
					t.Errorf("%s: subscriber %d told %v, want nothing (model mask %v, ready %v)", what, j, got, m.mask(), ready)
					continue
				}
				if got&^w != 0 {
					t.Errorf("%s: subscriber %d told %v, want within %v", what, j, got, w)
				}
			}
			for j := range want {
				if told[j] == 0 {
					t.Errorf("%s: subscriber %d never told (want %v)", what, j, want[j])
				}
			}
		}
		var polling PollEvents
		if err := r.Call(func() { polling = p.e.polling }); err != nil {
			t.Fatal(err)
		}
		if want := m.mask(); m.stale && polling&want != want || !m.stale && polling != want {
			t.Errorf("%s: the poll polls for %v, model says %v", what, polling, want)
		}
	}
	p.Close()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	uvtNoneLeft(t, u)
	if reps := u.Reports(); len(reps) != 0 {
		t.Errorf("reports: %v", reps)
	}
}

// FuzzPollProxyMask plays random proxy lifecycles (make, start twice,
// stop, close, the poll's own start and stop) and readiness over a socket
// pair against proxyModel, on each driver.
func FuzzPollProxyMask(f *testing.F) {
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 1, 1, 0, 7, 0})                         // reader and writer, one started
	f.Add([]byte{2, 0, 0, 0, 1, 1, 0, 1, 1, 6, 0, 7, 0, 3, 0, 7, 0}) // both started, readable, stop one
	f.Add([]byte{1, 5, 0, 7, 0, 0, 1, 7, 0, 1, 0, 7, 0, 4, 0, 7, 0}) // the poll's own, then a proxy takes over
	f.Add([]byte{0, 0, 2, 1, 0, 2, 0, 3, 0, 7, 0, 3, 0, 7, 0})       // started twice, stopped twice
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 200 {
			return
		}
		for _, d := range fuzzDrivers() {
			runPollProxyFuzz(t, d, data)
			if t.Failed() {
				t.Fatalf("on the %v driver", d)
			}
		}
	})
}
