package uv_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestIOSendsOfATurnCrossOnce: on the libuv driver the Sends that a turn's
// callbacks make are tried together, in one call into the shim at the end
// of the turn's dispatch, not one call each. Eight socket pairs echo a
// byte back and forth in their callbacks, all on one loop, so each turn
// reads from eight sockets and answers eight: the run's crossings stay
// well below one per message (they were one per message for the tries
// alone, plus the turns). On the pure-Go driver nothing crosses.
func TestIOSendsOfATurnCrossOnce(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const pairs, trips = 8, 200
		one := []byte{1}
		messages, closed := 0, 0 // loop-owned
		for range pairs {
			a, z, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			_, err = z.OnRead(func(p []byte, err error) {
				if err == nil {
					messages++
					z.Send(p)
				}
			})
			uv.UvtMust(t, err)
			n := 0
			_, err = a.OnRead(func(p []byte, err error) {
				if err != nil {
					return
				}
				messages++
				if n++; n == trips {
					a.Close()
					z.Close()
					closed++
					return
				}
				a.Send(one)
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, a.Start())
			uv.UvtMust(t, z.Start())
			uv.UvtMust(t, a.Send(one))
		}
		before := u.Stats().Crossings
		uv.UvtMust(t, u.Run(context.Background()))
		crossings := u.Stats().Crossings - before
		if closed != pairs || messages != 2*pairs*trips {
			t.Fatalf("%d pairs done, %d messages; want %d and %d", closed, messages, pairs, 2*pairs*trips)
		}
		perMsg := float64(crossings) / float64(messages)
		t.Logf("%d crossings for %d messages: %.3f per message", crossings, messages, perMsg)
		switch {
		case u.Driver() == reactor.DriverGo && crossings != 0:
			t.Errorf("%d crossings on the pure-Go driver, want 0", crossings)
		case u.Driver() == reactor.DriverLibuv && perMsg > 0.5:
			t.Errorf("%.3f crossings per message, want at most 0.5: the Sends of a turn are tried in one crossing", perMsg)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestIOSendsOfATurnInOrder: many Sends made in one callback, more than
// the socket takes at once and more than one batch of tries holds (so
// some tries come short, later ones of the same IO are not made, and the
// batch is flushed in the middle of the callback), reach the peer whole
// and in order, on both drivers.
func TestIOSendsOfATurnInOrder(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		const chunk, chunks = 4 << 10, 300
		data := pattern(chunk * chunks)
		a, z, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		var got []byte // loop-owned
		_, err = z.OnRead(func(p []byte, err error) {
			if err != nil {
				z.Close()
				return
			}
			got = append(got, p...)
			if len(got) == len(data) {
				z.Close()
				a.Close()
			}
		})
		uv.UvtMust(t, err)
		sent := false
		_, err = a.OnRead(func(p []byte, err error) {
			if err != nil || sent {
				return
			}
			sent = true
			for i := range chunks {
				if err := a.Send(data[i*chunk : (i+1)*chunk]); err != nil {
					t.Errorf("Send %d: %v", i, err)
					return
				}
			}
		})
		uv.UvtMust(t, err)
		uv.UvtMust(t, a.Start())
		uv.UvtMust(t, z.Start())
		uv.UvtMust(t, z.Send([]byte("go"))) // a's callback sends when it reads this
		uv.UvtMust(t, u.Run(context.Background()))
		if !bytes.Equal(got, data) {
			i := 0
			for i < len(got) && i < len(data) && got[i] == data[i] {
				i++
			}
			t.Errorf("the peer read %d bytes, want %d; the first difference at %d", len(got), len(data), i)
		}
		uv.UvtShutdown(t, u, false)
	})
}
