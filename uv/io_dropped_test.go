package uv_test

import (
	"net"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestIODroppedBusy: IOs and Listeners dropped without Close while
// stopped but holding resources, under GOGC=10: a stopped listener with
// connections in its queue, one started and stopped again with a dial in
// flight to it, an IO started and stopped again, a pipe(2) end. (A started
// one is the reactor's, docs/architecture.md §5, and so is an IO with a write in
// flight.) Once the dial completes, the collector closes them all:
// no handle is left, the clients queued read the end of the stream, and
// once the reactor is closed no goroutine or descriptor outlives it.
func TestIODroppedBusy(t *testing.T) {
	defer debugGC(10)()
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		base, fds := uv.UvtBaseline(t)
		u := uv.UvtNewReactorOn(t, d)
		start := handlesLeft(u)
		var clients []net.Conn
		var pipeW int
		func() {
			stopped, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			for range 3 {
				c, err := net.Dial("tcp4", stopped.Addr().String())
				uv.UvtMust(t, err)
				clients = append(clients, c)
			}
			started, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			_, err = event.Subscribe(started, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			uv.UvtMust(t, started.Start())
			uv.UvtMust(t, started.Stop())
			f, err := uv.DialAsync(u.Reactor, "tcp4", started.Addr().String())
			uv.UvtMust(t, err)
			// Its listener may go first (a reset): the error is heard.
			_, err = event.Subscribe(f, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			a, b, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			_, err = event.Subscribe(a, func(event.Event, any, error) {})
			uv.UvtMust(t, err)
			uv.UvtMust(t, a.Start())
			uv.UvtMust(t, a.Stop())
			runtime.KeepAlive(b)
			var p [2]int
			uv.UvtMust(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
			_, err = uv.OpenPipe(u.Reactor, p[0])
			uv.UvtMust(t, err)
			pipeW = p[1]
		}()
		uv.UvtCollectUntil(t, u, "the dropped IOs' and listeners' handles", func() bool {
			return handlesLeft(u) == start
		})
		for _, c := range clients {
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("a client queued at a dropped listener read %d, %v; want its end", n, err)
			}
			c.Close()
		}
		unix.Close(pipeW)
		uv.UvtShutdown(t, u, false)
		uv.UvtNoLeaks(t, base, fds)
	})
}
