package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// safety bounds every wait: a test that reaches it has hung, and fails.
const safety = 30 * time.Second

// server is one run of the program, on loopback.
type server struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// start runs the program on driver with args and waits until it listens.
// A driver this build lacks skips the test with the reason.
func start(t *testing.T, driver string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-driver", driver}, args...), pw)
		pw.CloseWithError(io.EOF)
		s.done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		err = <-s.done
		if errors.Is(err, reactor.ErrNoLibuv) {
			t.Skipf("the %s driver is not in this build: %v", driver, err)
		}
		t.Fatalf("run: %v", err)
	}
	s.addr = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(safety):
			t.Errorf("run did not return")
		}
	})
	return s
}

// wait waits for run to return and checks it returned nil.
func (s *server) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		s.done <- nil
	case <-time.After(safety):
		t.Fatalf("run did not return")
	}
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
	c.SetDeadline(time.Now().Add(safety))
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

var drivers = []string{"libuv", "go"}

func TestChatBroadcastAndShutdown(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			s := start(t, d)
			a := dial(t, s.addr)
			b := dial(t, s.addr)
			a.expect(t, "* "+b.LocalAddr().String()+" joined")
			c := dial(t, s.addr)
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

			s.cancel()
			for _, to := range []*client{a, b} {
				to.expect(t, "* server shutting down")
				to.expectEOF(t)
			}
			s.wait(t)
		})
	}
}

func TestChatIdleTimeout(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			s := start(t, d, "-idle", "20ms")
			a := dial(t, s.addr)
			a.expect(t, "* idle timeout")
			a.expectEOF(t)
			s.cancel()
			s.wait(t)
		})
	}
}

// TestChatSignal sends SIGTERM to the test process: safe here, because the
// program watches SIGTERM (through os/signal) from before it prints its
// address until it has handled the signal.
func TestChatSignal(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			s := start(t, d)
			a := dial(t, s.addr)
			b := dial(t, s.addr)
			a.expect(t, "* "+b.LocalAddr().String()+" joined")
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for _, to := range []*client{a, b} {
				to.expect(t, "* server shutting down")
				to.expectEOF(t)
			}
			s.wait(t)
		})
	}
}
