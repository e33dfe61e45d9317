package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/examples/extest"
)

// start runs the program on driver with args and waits until it listens:
// it returns the run and the address it listens on.
func start(t *testing.T, driver string, args ...string) (*extest.Program, string) {
	t.Helper()
	p := extest.Start(t, driver, run, append([]string{"-addr", "127.0.0.1:0", "-driver", driver}, args...)...)
	return p, p.Listening(t)
}

// startTwo runs the program on driver and connects two clients, a and b;
// a has heard b join.
func startTwo(t *testing.T, driver string) (s *extest.Program, addr string, a, b *client) {
	t.Helper()
	s, addr = start(t, driver)
	a = dial(t, addr)
	b = dial(t, addr)
	a.expect(t, "* "+b.LocalAddr().String()+" joined")
	return s, addr, a, b
}

type client struct {
	net.Conn
	*bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(extest.Safety))
	return &client{c, bufio.NewReader(c)}
}

func (c *client) expect(t *testing.T, want string) {
	t.Helper()
	got, err := c.ReadString('\n')
	if err != nil || got != want+"\n" {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

func (c *client) expectEOF(t *testing.T) {
	t.Helper()
	if got, err := c.ReadString('\n'); err != io.EOF {
		t.Fatalf("read %q, %v; want EOF", got, err)
	}
}

func TestChatBroadcastAndShutdown(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			s, addr, a, b := startTwo(t, d)
			c := dial(t, addr)
			a.expect(t, "* "+c.LocalAddr().String()+" joined")
			b.expect(t, "* "+c.LocalAddr().String()+" joined")

			io.WriteString(a, "hello\nsecond line\n")
			for _, to := range []*client{b, c} {
				to.expect(t, a.LocalAddr().String()+": hello")
				to.expect(t, a.LocalAddr().String()+": second line")
			}
			c.Close()
			a.expect(t, "* "+c.LocalAddr().String()+" left")
			b.expect(t, "* "+c.LocalAddr().String()+" left")

			s.Cancel()
			for _, to := range []*client{a, b} {
				to.expect(t, "* server shutting down")
				to.expectEOF(t)
			}
			s.Wait(t)
		})
	}
}

func TestChatIdleTimeout(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			s, addr := start(t, d, "-idle", "20ms")
			a := dial(t, addr)
			a.expect(t, "* idle timeout")
			a.expectEOF(t)
			s.Cancel()
			s.Wait(t)
		})
	}
}

// TestChatSignal sends SIGTERM to the test process: safe here, because the
// program watches SIGTERM (through os/signal) from before it prints its
// address until it has handled the signal.
func TestChatSignal(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			s, _, a, b := startTwo(t, d)
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for _, to := range []*client{a, b} {
				to.expect(t, "* server shutting down")
				to.expectEOF(t)
			}
			s.Wait(t)
		})
	}
}

// TestChatDropsASlowClient: one client never reads while another sends
// 8 MiB of lines; the server drops the slow one once its queue reaches the
// high-water mark (its queued bytes stay bounded) with a reset, says so
// to the others, and the client that reads gets every line.
func TestChatDropsASlowClient(t *testing.T) {
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			s, addr, a, b := startTwo(t, d)
			slow := dial(t, addr)
			a.expect(t, "* "+slow.LocalAddr().String()+" joined")
			b.expect(t, "* "+slow.LocalAddr().String()+" joined")

			const lines = 8 << 10
			line := strings.Repeat("x", 1000)
			// The sender stays at most window lines (256 KB, a quarter of
			// the high-water mark) ahead of the client that reads, so that
			// only the client that never reads can be too slow, however
			// loaded the machine.
			const window = 256
			read := make(chan struct{}, lines)
			go func() {
				w := bufio.NewWriter(a)
				for i := range lines {
					if i >= window {
						<-read
					}
					w.WriteString(line + "\n")
					if i%16 == 15 {
						w.Flush()
					}
				}
				w.Flush()
			}()
			from := a.LocalAddr().String() + ": " + line + "\n"
			dropped := "* " + slow.LocalAddr().String() + " dropped: too slow\n"
			got, sawDrop := 0, false
			for got < lines {
				l, err := b.ReadString('\n')
				switch {
				case err != nil:
					t.Fatalf("after %d lines: %v", got, err)
				case l == from:
					got++
					read <- struct{}{}
				case l == dropped:
					sawDrop = true
				default:
					t.Fatalf("after %d lines, read %.60q", got, l)
				}
			}
			if !sawDrop {
				t.Errorf("the reader got every line, and no word of the slow client's drop")
			}
			// The slow client is reset, not sent its queue: it reads at
			// most what its buffers held, then ECONNRESET.
			if _, err := io.Copy(io.Discard, slow.Reader); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("the dropped client's read: %v; want ECONNRESET (reset at once)", err)
			}
			s.Cancel()
			s.Wait(t)
		})
	}
}
