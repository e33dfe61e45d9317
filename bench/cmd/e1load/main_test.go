// Tests for e1load: a load against a server it starts, the checking of
// echoes, and the flags (bench/internal/serverproc tests the server
// contract itself). The test binary plays the servers: run
// with E1LOAD_TEST_SERVER set, it becomes the server that variable names.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/bench/internal/counts"
	"github.com/uvevent/uvevent/bench/internal/serverproc"
)

func TestMain(m *testing.M) {
	switch os.Getenv("E1LOAD_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "echo":
		serve(func(c net.Conn) { io.Copy(c, c) })
	case "corrupt": // echoes with every byte changed
		serve(func(c net.Conn) {
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				for i := range buf[:n] {
					buf[i]++
				}
				if _, werr := c.Write(buf[:n]); err != nil || werr != nil {
					return
				}
			}
		})
	}
	os.Exit(99)
}

// serve is a test server following e1load's contract.
func serve(handle func(net.Conn)) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			handle(c)
		}()
	}
}

// testServerArgv returns the command line of the test server kind, and sets
// the variable that selects it for the rest of the test.
func testServerArgv(t *testing.T, kind string) []string {
	t.Setenv("E1LOAD_TEST_SERVER", kind)
	return []string{os.Args[0]}
}

func TestConfigCheck(t *testing.T) {
	good := config{impl: "x", server: []string{"srv"}, conns: 1, size: 8, duration: time.Second}
	if err := good.check(); err != nil {
		t.Fatalf("check(%+v) = %v", good, err)
	}
	for name, change := range map[string]func(*config){
		"no impl":         func(c *config) { c.impl = "" },
		"server and addr": func(c *config) { c.addr = "127.0.0.1:1" },
		"neither":         func(c *config) { c.server = nil },
		"no conns":        func(c *config) { c.conns = 0 },
		"short message":   func(c *config) { c.size = 7 },
		"long message":    func(c *config) { c.size = maxSize + 1 },
		"no window":       func(c *config) { c.duration = 0 },
		"negative warmup": func(c *config) { c.warmup = -1 },
		"negative counts": func(c *config) { c.counts = -1 },
	} {
		c := good
		c.server = []string{"srv"}
		change(&c)
		if err := c.check(); err == nil {
			t.Errorf("%s: check(%+v) succeeded", name, c)
		}
	}
}

// TestServerLifecycle starts a server, loads it and stops it, and checks
// that the process is gone afterwards.
func TestServerLifecycle(t *testing.T) {
	ctx := context.Background()
	s, err := serverproc.Start(ctx, testServerArgv(t, "echo"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CPU(); err != nil {
		t.Errorf("cpu of a running server: %v", err)
	}
	l, err := dialAll(ctx, s.Addr(), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.conns {
		l.wg.Add(1)
		go l.pingPong(i, 100)
	}
	// The load runs until stopped; every connection counts once it has made
	// a round trip.
	for l.count() < 3 {
		select {
		case err := <-l.failed:
			t.Fatal(err)
		case <-time.After(time.Millisecond):
		}
	}
	l.close()
	select {
	case err := <-l.failed:
		t.Errorf("closing the load reported a failure: %v", err)
	default:
	}

	pid := s.Pid()
	s.Stop()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d after stop: kill(0) = %v, want ESRCH", pid, err)
	}
}

// TestChangedEcho checks that an echo that does not match the message is a
// failure, reported by run.
func TestChangedEcho(t *testing.T) {
	cfg := config{impl: "x", server: testServerArgv(t, "corrupt"), conns: 2, size: 64, duration: time.Minute}
	_, err := run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "came back changed") {
		t.Errorf("run against a corrupting server = %v, want a changed-message error", err)
	}
}

func TestCallKeys(t *testing.T) {
	calls := counts.Calls{Total: 5000, Group: map[string]int64{
		"read": 1000, "write": 1000, "epoll_pwait": 105, "futex": 50, "nanosleep": 3, "poll": 0,
	}}
	want := " syscalls_per_msg=5.0000 read_per_msg=1.0000 write_per_msg=1.0000 epoll_pwait_per_msg=0.1050" +
		" epoll_wait_per_msg=0.0000 futex_per_msg=0.0500 nanosleep_per_msg=0.0030 poll_per_msg=0.0000"
	if got := callKeys(calls, 1000); got != want {
		t.Errorf("callKeys =\n%q\nwant\n%q", got, want)
	}
}

// TestRunPrintsCounts loads the test server briefly with a counting
// window: the result line has the context switches per message, and the
// system calls per message or a note saying why there are none.
// A window in which no message came back (a machine so loaded that the
// server was not scheduled in it) is tried again, four times longer each
// time: what is checked is the line, not how fast it came.
func TestRunPrintsCounts(t *testing.T) {
	var out string
	var err error
	for window := 200 * time.Millisecond; ; window *= 4 {
		cfg := config{impl: "x", server: testServerArgv(t, "echo"), conns: 2, size: 64,
			duration: window, counts: window}
		out, err = run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "no message came back") || window > 10*time.Second {
			break
		}
		t.Logf("%v: trying a window of %v", err, 4*window)
	}
	if err != nil {
		t.Fatal(err)
	}
	line, notes, _ := strings.Cut(out, "\n")
	if !strings.Contains(line, " ctxsw_per_msg=") {
		t.Errorf("result line %q has no ctxsw_per_msg", line)
	}
	if !strings.Contains(line, " syscalls_per_msg=") && !strings.Contains(notes, "# E1 no syscall counts: ") {
		t.Errorf("no syscall counts and no note saying why:\n%s", out)
	}
	if strings.Contains(line, "allocs_per_msg") {
		t.Errorf("allocations from a server that does not report them: %q", line)
	}
	for _, n := range strings.Split(notes, "\n") {
		if !strings.HasPrefix(n, "# E1 ") {
			t.Errorf("note %q does not start with \"# E1 \"", n)
		}
	}
}
