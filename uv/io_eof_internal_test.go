package uv

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
)

// TestIOEndWhileStopped: the stream's end (or bytes and then the end)
// arriving while the IO is stopped reaches its callbacks at the next
// Start, after the bytes kept: a callback waiting for io.EOF is not left
// waiting for ever.
func TestIOEndWhileStopped(t *testing.T) {
	for _, payload := range []string{"", "abc"} {
		t.Run("bytes="+payload, func(t *testing.T) {
			UvtEachDriver(t, func(t *testing.T, u *UvtReactor) {
				stop := UvtServe(t, u)
				a, b, err := Pipe(u.Reactor)
				UvtMust(t, err)
				type note struct {
					Data string
					Err  error
				}
				var got []note // loop-owned
				ended := make(chan struct{})
				_, err = event.Subscribe(a, func(_ event.Event, res any, err error) {
					p := a.Result(res)
					got = append(got, note{string(p), err})
					if errors.Is(err, io.EOF) {
						close(ended) // the end comes once
					}
				})
				UvtMust(t, err)
				UvtMust(t, a.Start())
				UvtMust(t, a.Stop())
				if payload != "" {
					_, err = b.Write([]byte(payload))
					UvtMust(t, err)
				}
				UvtMust(t, b.CloseWrite())
				// Reading runs ahead while stopped: wait until it met the end.
				UvtWaitFor(t, "the end read ahead", func() bool {
					var rerr error
					a.e.exec(func() { rerr = a.e.rerr })
					return rerr != nil
				})
				UvtMust(t, a.Start())
				UvtRecv(t, ended, "the end at the callbacks")
				want := []note{{"", io.EOF}}
				if payload != "" {
					want = []note{{payload, nil}, {"", io.EOF}}
				}
				UvtMust(t, u.Call(func() {
					if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y error) bool { return errors.Is(x, y) })); diff != "" {
						t.Errorf("callbacks after Start (-want +got):\n%s", diff)
					}
				}))
				UvtMust(t, a.Close())
				UvtMust(t, b.Close())
				stop()
				UvtShutdown(t, u, false)
			})
		})
	}
}
