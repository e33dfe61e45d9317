//go:build uvfaults && cgo

package uv_test

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Failures injected into the shim's libuv calls (built with the uvfaults
// tag: make stress): the next uv_*_init, uv_read_start, uv_write or
// uv_fs_poll_start fails with ENOMEM or EINVAL; the error reaches the
// caller (errors.Is), the reactor goes on running (a trigger sent after it
// fires), and nothing is left behind once the reactor closes.
func TestFaultInjectedLibuvCalls(t *testing.T) {
	injected := 0
	for _, errno := range []syscall.Errno{syscall.ENOMEM, syscall.EINVAL} {
		for _, tc := range []struct {
			name string
			op   int
			call func(t *testing.T, u *uv.UvtReactor) error
		}{
			{"trigger init", uvcgo.FaultInit, func(_ *testing.T, u *uv.UvtReactor) error {
				_, err := uv.NewTrigger(u.Reactor)
				return err
			}},
			{"phase init", uvcgo.FaultInit, func(_ *testing.T, u *uv.UvtReactor) error {
				_, err := uv.NewCheck(u.Reactor)
				return err
			}},
			{"pipe init", uvcgo.FaultInit, func(_ *testing.T, u *uv.UvtReactor) error {
				_, _, err := uv.Pipe(u.Reactor)
				return err
			}},
			{"read start", uvcgo.FaultReadStart, func(_ *testing.T, u *uv.UvtReactor) error {
				a, b, err := uv.Pipe(u.Reactor)
				if err != nil {
					return err
				}
				defer a.Close()
				defer b.Close()
				// A callback to read for: a started IO with none reads nothing
				// on the loop (it keeps what comes for Read).
				if _, err := a.OnRead(func([]byte, error) {}); err != nil {
					return err
				}
				return a.Start()
			}},
			{"write", uvcgo.FaultWrite, func(t *testing.T, u *uv.UvtReactor) error {
				a, b, err := uv.Pipe(u.Reactor)
				if err != nil {
					return err
				}
				defer a.Close()
				defer b.Close()
				// More than the socket takes at once, so that libuv's
				// uv_write is called for the rest.
				stop := uv.UvtServe(t, u)
				defer stop()
				a.SetWriteDeadline(time.Now().Add(uv.UvtSafety))
				_, err = a.Write(make([]byte, 8<<20))
				return err
			}},
			{"fspoll init", uvcgo.FaultInit, func(_ *testing.T, u *uv.UvtReactor) error {
				_, err := uv.NewFSPoll(u.Reactor, os.DevNull, time.Second)
				return err
			}},
			{"fspoll start", uvcgo.FaultFSPollStart, func(t *testing.T, u *uv.UvtReactor) error {
				p, err := uv.NewFSPoll(u.Reactor, os.DevNull, time.Second)
				if err != nil {
					return err
				}
				defer p.Close()
				err = p.Start()
				// The failed Start left the poll stopped, and it starts.
				if st := event.StateOf(p); st == event.Active {
					t.Errorf("state after the failed Start = %v, want it not active", st)
				}
				if again := p.Start(); again != nil {
					t.Errorf("Start after the failed one: %v", again)
				}
				return err
			}},
		} {
			t.Run(tc.name+"/"+errno.Error(), func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, reactor.DriverLibuv)
				uvcgo.InjectFault(tc.op, int(errno))
				err := tc.call(t, u)
				uvcgo.InjectFault(0, 0) // disarm, had the call not reached libuv
				if !errors.Is(err, errno) {
					t.Errorf("%s with %v injected: %v, want an error matching it", tc.name, errno, err)
				}
				injected++
				faultLeavesTheLoopRunning(t, u)
				uv.UvtShutdown(t, u, true)
			})
		}
	}
	t.Logf("%d faults injected", injected)
}

// faultLeavesTheLoopRunning checks that the reactor still runs after a
// failed call: a trigger sent now fires in a turn.
func faultLeavesTheLoopRunning(t *testing.T, u *uv.UvtReactor) {
	t.Helper()
	tr, err := uv.NewTrigger(u.Reactor)
	uv.UvtMust(t, err)
	defer tr.Close()
	fired := false
	_, err = event.Subscribe(tr, func(event.Event, any, error) { fired = true })
	uv.UvtMust(t, err)
	uv.UvtMust(t, tr.Start())
	uv.UvtMust(t, tr.Send())
	uv.UvtTurnUntil(t, u, "the trigger sent after the fault to fire", func() bool { return fired })
}
