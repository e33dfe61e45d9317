package uv_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// manyConns is how many connections TestIOManyConnections holds open.
const manyConns = 10_000

// TestMain lets the test binary serve as the many-connections client.

// TestIOManyConnections holds 10,000 connections open on one reactor,
// echoing a byte on each in callbacks, then sees them all end.
func TestIOManyConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections: not in -short")
	}
	var lim unix.Rlimit
	uv.UvtMust(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	if lim.Max < manyConns+1000 {
		t.Skipf("RLIMIT_NOFILE's hard limit %d is below %d", lim.Max, manyConns+1000)
	}
	old := lim
	lim.Cur = lim.Max
	uv.UvtMust(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)

	u := uv.UvtNewReactor(t)
	stop := uv.UvtServe(t, u)
	ln, err := uv.ListenConfig{Backlog: 4096}.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	// Each connection's callback holds its IO, which keeps it from the
	// collector until the callback closes it at the end of the stream.
	// Counted on the loop goroutine only.
	accepted, live := 0, 0
	ended := make(chan int, 1)
	_, err = event.Subscribe(ln, func(_ event.Event, res any, _ error) {
		c, ok := res.(*uv.IO)
		if !ok {
			return
		}
		accepted++
		live++
		event.Subscribe(c, func(_ event.Event, res any, rerr error) {
			if b, ok := readOf(res); ok && rerr == nil {
				rerr = c.Send(b)
			}
			if rerr == nil {
				return
			}
			c.Close()
			if live--; live == 0 && accepted == manyConns {
				ended <- accepted
			}
		})
		c.Start()
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "UVT_MANY_CLIENT="+ln.Addr().String(), "UVT_MANY_N="+strconv.Itoa(manyConns))
	stdin, err := cmd.StdinPipe()
	uv.UvtMust(t, err)
	stdout, err := cmd.StdoutPipe()
	uv.UvtMust(t, err)
	uv.UvtMust(t, cmd.Start())
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	if got := uv.UvtRecv(t, line, "the client's report"); got != "ok\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("client: %q", got)
	}
	held := 0
	uv.UvtMust(t, u.Call(func() { held = live }))
	if held != manyConns {
		t.Errorf("%d connections held, want %d", held, manyConns)
	}
	stdin.Close() // the client exits: every connection ends
	if n := uv.UvtRecv(t, ended, "every connection's end"); n != manyConns {
		t.Errorf("%d connections ended, want %d", n, manyConns)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("client: %v", err)
	}
	ln.Close()
	stop()
	uv.UvtShutdown(t, u, false)
}
