// Starting, watching and stopping the echo server under load.
package main

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

// server is a running echo server started by e1load.
type server struct {
	cmd    *exec.Cmd
	addr   string
	exited chan error // receives cmd.Wait's result once
}

// startServer runs argv and waits, at most timeout, for its ready line.
func startServer(ctx context.Context, argv []string, timeout time.Duration) (*server, error) {
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
	s := &server{cmd: cmd, exited: make(chan error, 1)}
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

// cpu returns the server's CPU time so far; 0 for a server e1load did not
// start (a nil *server).
func (s *server) cpu() (time.Duration, error) {
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
func (s *server) signal(sig syscall.Signal) {
	syscall.Kill(-s.cmd.Process.Pid, sig)
}

// stop sends SIGTERM, then SIGKILL after stopGrace, to the server's process
// group, and reaps the server.
func (s *server) stop() {
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
