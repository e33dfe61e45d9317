// Package serverproc starts, watches and stops the server process that a
// load generator under bench/ loads (e1load, h1load, m2load): the server
// contract those commands state. The server must listen on a loopback
// address, print "listening HOST:PORT" as the first line of its stdout once
// it accepts connections, and serve until SIGTERM. It runs in a process
// group of its own, signalled as a whole on Stop, and dies with the load
// generator should that die first.
package serverproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/bench/internal/cputime"
)

// stopGrace is how long the server has to exit after SIGTERM before it is
// killed.
const stopGrace = 2 * time.Second

// Server is a running server process.
type Server struct {
	cmd    *exec.Cmd
	addr   string
	exited chan error // receives cmd.Wait's result once
}

// Start runs argv and waits, at most timeout, for its ready line.
func Start(ctx context.Context, argv []string, timeout time.Duration) (*Server, error) {
	ready := &readyWriter{line: make(chan string, 1)}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = ready
	cmd.Stderr = os.Stderr
	// The server gets a process group of its own, signalled as a whole on
	// stop; should e1load die, the kernel kills the server too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()

	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case line := <-ready.line:
		s.addr, err = parseReady(line)
		if err == nil {
			return s, nil
		}
	case werr := <-s.exited:
		return nil, fmt.Errorf("server %s exited before it was ready: %v", argv[0], werr)
	case <-t.C:
		err = fmt.Errorf("server %s printed no ready line in %v", argv[0], timeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.signal(syscall.SIGKILL)
	<-s.exited
	return nil, err
}

// parseReady returns the address of a "listening HOST:PORT" line.
func parseReady(line string) (string, error) {
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		return "", fmt.Errorf("server's first line %q: want \"listening HOST:PORT\"", line)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("server's first line %q: %v", line, err)
	}
	return addr, nil
}

// Addr is the address of the server's ready line.
func (s *Server) Addr() string { return s.addr }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// CPU returns the server's CPU time so far (user plus system, all threads);
// 0 for a nil *Server (a server the caller did not start).
func (s *Server) CPU() (time.Duration, error) {
	if s == nil {
		return 0, nil
	}
	d, err := cputime.Process(s.cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("server CPU time: %w", err)
	}
	return d, nil
}

// signal sends sig to the server's process group.
func (s *Server) signal(sig syscall.Signal) {
	syscall.Kill(-s.cmd.Process.Pid, sig)
}

// Stop sends SIGTERM, then SIGKILL after stopGrace, to the server's process
// group, and reaps the server.
func (s *Server) Stop() {
	s.signal(syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-s.exited:
	case <-t.C:
		s.signal(syscall.SIGKILL)
		<-s.exited
	}
}

// readyWriter is the server's stdout: it hands over the first line and
// drops the rest.
type readyWriter struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	line chan string
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.sent = true
		w.line <- string(w.buf[:i])
		w.buf = nil
	} else if len(w.buf) > 4096 {
		return 0, errors.New("server's first line is longer than 4096 bytes")
	}
	return len(p), nil
}

// CheckLoopback refuses an address that is not an IP literal on the
// loopback network: the load never leaves the machine.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %s: want a loopback IP address, such as 127.0.0.1:PORT", addr)
	}
	return nil
}
