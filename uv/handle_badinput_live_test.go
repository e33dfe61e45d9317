package uv_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Nil arguments given to a live reactor, and a zero Reactor given where a
// reactor is wanted, are refused at the call with a clear error, on both
// drivers: never a panic then or later on the loop.
func TestNilArgumentsOnLiveReactorRefused(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var nilCtx context.Context // the bad input under test
		for _, c := range []struct {
			name string
			err  error
			want error
		}{
			{"Call(nil)", u.Call(nil), syscall.EINVAL},
			{"Post(nil)", u.Post(nil), syscall.EINVAL},
			{"Run(nil)", u.Run(nilCtx), event.ErrNilContext},
			{"RunOnce(nil)", u.RunOnce(nilCtx), event.ErrNilContext},
			{"Shutdown(nil)", u.Shutdown(nilCtx), event.ErrNilContext},
			{"Dial(nil ctx)", second(uv.Dial(nilCtx, u.Reactor, "tcp", "127.0.0.1:1")), event.ErrNilContext},
			{"Stat(nil ctx)", second(uv.Stat(nilCtx, u.Reactor, ".")), event.ErrNilContext},
			{"OpenAsync(nil ctx)", second(uv.OpenAsync(nilCtx, u.Reactor, ".", os.O_RDONLY, 0)), event.ErrNilContext},
			{"NewTimer(zero Reactor)", second((&reactor.Reactor{}).NewTimer(1, 0)), reactor.ErrZeroReactor},
			{"NewSignal(zero Reactor)", second(uv.NewSignal(&reactor.Reactor{}, syscall.SIGUSR1)), reactor.ErrZeroReactor},
			{"NewTrigger(zero Reactor)", second(uv.NewTrigger(&reactor.Reactor{})), reactor.ErrZeroReactor},
			{"Listen(zero Reactor)", second(uv.Listen(&reactor.Reactor{}, "tcp", "127.0.0.1:0")), reactor.ErrZeroReactor},
		} {
			if !errors.Is(c.err, c.want) {
				t.Errorf("%s = %v, want an error matching %v", c.name, c.err, c.want)
			}
		}
		// Nothing refused was queued: a turn runs clean.
		if err := u.RunNoWait(context.Background()); err != nil {
			t.Errorf("RunNoWait after the refusals: %v", err)
		}
		uv.UvtShutdown(t, u, false)
	})
}

func second[T any](_ T, err error) error { return err }
