//go:build !linux

package uv

import "github.com/uvevent/uvevent/reactor"

// The pure-Go driver watches descriptors with epoll (poller_go_linux.go).
// Elsewhere no descriptor can join a reactor's set: every kind over a
// descriptor refuses to start on that driver, so no goPoller exists and
// its methods are never reached.

type goPoller struct {
	byFD map[int]pollMember
}

func joinPoller(*reactor.Reactor, int, pollMember) (*goPoller, error) {
	return nil, unsupported("the pure-Go driver's descriptor polling (epoll)")
}

func joinPollerSocket(r *reactor.Reactor, fd int, m pollMember) (*goPoller, error) {
	return joinPoller(r, fd, m)
}

func (*goPoller) ctlMask(int, uint32, uint32) error { return unsupported("epoll") }
func (*goPoller) ctl(int, int, PollEvents) error    { return unsupported("epoll") }
func (*goPoller) remove(int)                        {}
func (*goPoller) deliver() int                      { return 0 }

// No descriptor joins a set here, so these bits never meet a kernel.
const (
	epollIn = 1 << iota
	epollOut
	epollErr
	epollHup
	epollCtlDel = 0
)

func epollEvents(PollEvents) uint32                       { return 0 }
func epollReport(uint32, PollEvents) (int32, int64, bool) { return 0, 0, false }
