//go:build uvfaults && cgo

package uv_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Failures injected into the shim's libuv calls (built with the uvfaults
// tag: make stress): the next uv_*_init, uv_read_start or uv_write fails
// with ENOMEM or EINVAL; the error reaches the caller
// (errors.Is), and nothing is left behind once the reactor closes.
func TestFaultInjectedLibuvCalls(t *testing.T) {
	injected := 0
	for _, errno := range []syscall.Errno{syscall.ENOMEM, syscall.EINVAL} {
		for _, tc := range []struct {
			name string
			op   int
			call func(u *uv.UvtReactor) error
		}{
			{"trigger init", uvcgo.FaultInit, func(u *uv.UvtReactor) error {
				_, err := uv.NewTrigger(u.Reactor)
				return err
			}},
			{"phase init", uvcgo.FaultInit, func(u *uv.UvtReactor) error {
				_, err := uv.NewCheck(u.Reactor)
				return err
			}},
			{"pipe init", uvcgo.FaultInit, func(u *uv.UvtReactor) error {
				_, _, err := uv.Pipe(u.Reactor)
				return err
			}},
			{"read start", uvcgo.FaultReadStart, func(u *uv.UvtReactor) error {
				a, b, err := uv.Pipe(u.Reactor)
				if err != nil {
					return err
				}
				defer a.Close()
				defer b.Close()
				return a.Start()
			}},
			{"write", uvcgo.FaultWrite, func(u *uv.UvtReactor) error {
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
		} {
			t.Run(tc.name+"/"+errno.Error(), func(t *testing.T) {
				u := uv.UvtNewReactorOn(t, reactor.DriverLibuv)
				uvcgo.InjectFault(tc.op, int(errno))
				err := tc.call(u)
				uvcgo.InjectFault(0, 0) // disarm, had the call not reached libuv
				if !errors.Is(err, errno) {
					t.Errorf("%s with %v injected: %v, want an error matching it", tc.name, errno, err)
				}
				injected++
				uv.UvtShutdown(t, u, true)
			})
		}
	}
	t.Logf("%d faults injected", injected)
}
