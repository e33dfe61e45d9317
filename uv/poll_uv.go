package uv

// The libuv driver's poll: a uv_poll_t (internal/cgo/poll.c), and the descriptors
// each loop polls (libuv allows one poll a descriptor).

import (
	"sync"

	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// pollEvent is the libuv driver's poll event, reachable from the reactor's
// id table until libuv's close callback ran. It never points back at its
// Poll.
type pollEvent struct {
	core
	pollState
}

func (e *pollEvent) kindName() string             { return "poll" }
func (e *pollEvent) describe() string             { return e.pollState.describe() }
func (e *pollEvent) reactorOf() *reactor.Reactor  { return e.r }
func (e *pollEvent) live() bool                   { return e.h != 0 }
func (e *pollEvent) notify(r PollEvents, x error) { eventkind.Notify(&e.Base, r, x) }

func (e *pollEvent) watch(_, to PollEvents) error {
	switch {
	case to != 0:
		// libuv aborts the process when epoll refuses the descriptor in
		// the next turn: one closed behind the poll is refused here.
		if err := fdOpen("uv_poll_start", e.fd); err != nil {
			return err
		}
		return e.loop.StartPoll(e.h, int(to))
	case e.h == 0:
		return nil // closing: uv_close stops it
	}
	return e.loop.StopPoll(e.h)
}

func (e *pollEvent) completed(rec *uvcgo.Completion) { e.report(rec.Status, rec.N) }

// closing closes the proxies and frees the descriptor for another poll:
// uv_close, which follows, stops libuv watching it at once.
func (e *pollEvent) closing() {
	pollFDs.remove(e.loop, e.fd)
	e.closeProxies()
}

// pollFDs records, per loop, the descriptors that have a poll. Loops are
// driven by different goroutines, hence the lock; an entry goes when its
// loop has no poll left.
var pollFDs = fdSet{m: map[*uvcgo.Loop]map[int]struct{}{}}

type fdSet struct {
	mu sync.Mutex
	m  map[*uvcgo.Loop]map[int]struct{}
}

func (s *fdSet) add(l *uvcgo.Loop, fd int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	fds := s.m[l]
	if _, dup := fds[fd]; dup {
		return false
	}
	if fds == nil {
		fds = map[int]struct{}{}
		s.m[l] = fds
	}
	fds[fd] = struct{}{}
	return true
}

func (s *fdSet) remove(l *uvcgo.Loop, fd int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fds := s.m[l]; fds != nil {
		delete(fds, fd)
		if len(fds) == 0 {
			delete(s.m, l)
		}
	}
}
