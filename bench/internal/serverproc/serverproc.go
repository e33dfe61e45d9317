// Package serverproc starts, watches and stops the server process that a
// load generator under bench/ loads (e1load, h1load, m2load): the server
// contract those commands state. The server must listen on a loopback
// address, print "listening HOST:PORT" as the first line of its stdout once
// it accepts connections, and serve until SIGTERM. It runs in a process
// group of its own, signalled as a whole on Stop, and dies with the load
// generator should that die first. A server that can report its heap
// allocations says so with the word "stats" after the address (its line
// "listening HOST:PORT stats") and answers each SIGUSR1 with a line "stats
// mallocs=N" (bench/internal/serverstats); Mallocs asks it.
package serverproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
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
	stats  bool        // the server answers SIGUSR1 with a stats line
	lines  chan string // the server's stats lines
	exited chan error  // receives cmd.Wait's result once
}

// Start runs argv and waits, at most timeout, for its ready line.
func Start(ctx context.Context, argv []string, timeout time.Duration) (*Server, error) {
	ready := &readyWriter{line: make(chan string, 1), stats: make(chan string, 1)}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = ready
	cmd.Stderr = os.Stderr
	// The server gets a process group of its own, signalled as a whole on
	// stop; should e1load die, the kernel kills the server too (Linux).
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, lines: ready.stats, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()

	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case line := <-ready.line:
		s.addr, s.stats, err = parseReady(line)
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

// parseReady returns the address of a "listening HOST:PORT" line, and
// whether it ends with the word "stats".
func parseReady(line string) (addr string, stats bool, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		return "", false, fmt.Errorf("server's first line %q: want \"listening HOST:PORT\"", line)
	}
	addr, stats = strings.CutSuffix(rest, " stats")
	if strings.ContainsAny(addr, " \t") {
		return "", false, fmt.Errorf("server's first line %q: want \"listening HOST:PORT [stats]\"", line)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", false, fmt.Errorf("server's first line %q: %v", line, err)
	}
	return addr, stats, nil
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

// statsTimeout bounds the wait for a server's stats line.
const statsTimeout = 5 * time.Second

// Mallocs asks the server for the heap allocations it has made so far.
// ok is false for a server that does not report them (its ready line said
// no "stats") and for a nil *Server.
func (s *Server) Mallocs() (n int64, ok bool, err error) {
	if s == nil || !s.stats {
		return 0, false, nil
	}
	for len(s.lines) > 0 { // a line left over from an answer too late
		<-s.lines
	}
	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return 0, false, err
	}
	t := time.NewTimer(statsTimeout)
	defer t.Stop()
	select {
	case line := <-s.lines:
		n, err := parseStats(line)
		return n, err == nil, err
	case <-t.C:
		return 0, false, fmt.Errorf("server printed no stats line in %v", statsTimeout)
	}
}

// parseStats returns N of a "stats mallocs=N" line.
func parseStats(line string) (int64, error) {
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "stats mallocs=")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("server's stats line %q: want \"stats mallocs=N\"", line)
	}
	return n, nil
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

// readyWriter is the server's stdout: it hands over the first line on
// line, then each line that starts with "stats " on stats (dropped when
// one is still waiting there), and drops the rest.
type readyWriter struct {
	mu    sync.Mutex
	buf   []byte
	sent  bool
	line  chan string
	stats chan string
}

// maxLine bounds a line of the server's.
const maxLine = 4096

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if !w.sent {
			w.sent = true
			w.line <- line
		} else if strings.HasPrefix(line, "stats ") {
			select {
			case w.stats <- line:
			default:
			}
		}
	}
	if len(w.buf) > maxLine {
		if !w.sent {
			return 0, errors.New("server's first line is longer than 4096 bytes")
		}
		w.buf = w.buf[:0] // a long line of output: not one to read
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
