// Tests for the server contract: the ready line, a start that fails, a
// stop that leaves no process. The test binary plays the servers: run with
// SERVERPROC_TEST_SERVER set, it becomes the server that variable names.
package serverproc

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

	"github.com/uvevent/uvevent/bench/internal/serverstats"
)

func TestMain(m *testing.M) {
	switch os.Getenv("SERVERPROC_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "echo":
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
			go io.Copy(c, c)
		}
	case "stats": // reports its allocations
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		serverstats.Ready(ln.Addr().String())
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			go io.Copy(c, c)
		}
	case "silent": // never prints its ready line
		time.Sleep(time.Hour)
	case "bad-ready":
		fmt.Println("ready on port 80")
		time.Sleep(time.Hour)
	case "exit":
		os.Exit(3)
	}
	os.Exit(99)
}

// testServerArgv returns the command line of the test server kind, and sets
// the variable that selects it for the rest of the test.
func testServerArgv(t *testing.T, kind string) []string {
	t.Setenv("SERVERPROC_TEST_SERVER", kind)
	return []string{os.Args[0]}
}

func TestParseReady(t *testing.T) {
	tests := []struct {
		line, want string
		stats      bool
		wantErr    bool
	}{
		{line: "listening 127.0.0.1:4000", want: "127.0.0.1:4000"},
		{line: "listening [::1]:4000\r", want: "[::1]:4000"},
		{line: "listening 127.0.0.1:4000 stats", want: "127.0.0.1:4000", stats: true},
		{line: "listening 127.0.0.1:4000 stats\r", want: "127.0.0.1:4000", stats: true},
		{line: "listening 127.0.0.1:4000 other", wantErr: true},
		{line: "listening 127.0.0.1", wantErr: true},
		{line: "Listening 127.0.0.1:4000", wantErr: true},
		{line: "", wantErr: true},
	}
	for _, tt := range tests {
		got, stats, err := parseReady(tt.line)
		if (err != nil) != tt.wantErr || got != tt.want || stats != tt.stats {
			t.Errorf("parseReady(%q) = %q, %v, %v; want %q, %v, error %v", tt.line, got, stats, err, tt.want, tt.stats, tt.wantErr)
		}
	}
}

func TestParseStats(t *testing.T) {
	if n, err := parseStats("stats mallocs=1234\r"); n != 1234 || err != nil {
		t.Errorf("parseStats = %d, %v; want 1234", n, err)
	}
	for _, bad := range []string{"stats mallocs=", "stats mallocs=-1", "stats frees=3", "mallocs=3"} {
		if _, err := parseStats(bad); err == nil {
			t.Errorf("parseStats(%q) succeeded", bad)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, wantOK := range map[string]bool{
		"127.0.0.1:4000":  true,
		"127.9.9.9:1":     true,
		"[::1]:4000":      true,
		"10.0.0.1:4000":   false,
		"example.com:80":  false,
		"localhost:4000":  false,
		"127.0.0.1":       false,
		"[::ffff:1]:4000": false,
	} {
		if err := CheckLoopback(addr); (err == nil) != wantOK {
			t.Errorf("CheckLoopback(%q) = %v, want ok %v", addr, err, wantOK)
		}
	}
}

func TestReadyWriter(t *testing.T) {
	w := &readyWriter{line: make(chan string, 1)}
	for _, p := range []string{"listen", "ing 127.0.0.1:1\nmore", " output\nand more\n"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := <-w.line; got != "listening 127.0.0.1:1" {
		t.Errorf("ready line %q, want %q", got, "listening 127.0.0.1:1")
	}
	stats := &readyWriter{line: make(chan string, 1), stats: make(chan string, 1)}
	for _, p := range []string{"listening 127.0.0.1:1 stats\nnoise\nstats mall", "ocs=5\nstats mallocs=6\n"} {
		if n, err := stats.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	<-stats.line
	if got := <-stats.stats; got != "stats mallocs=5" {
		t.Errorf("stats line %q, want the first one waiting, %q", got, "stats mallocs=5")
	}
	long := &readyWriter{line: make(chan string, 1)}
	if _, err := long.Write([]byte(strings.Repeat("x", 5000))); err == nil {
		t.Errorf("a 5000-byte first line was accepted")
	}
}

// TestStartStop starts a server, talks to it, and checks that the process
// is gone after Stop.
func TestStartStop(t *testing.T) {
	s, err := Start(context.Background(), testServerArgv(t, "echo"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CPU(); err != nil {
		t.Errorf("CPU of a running server: %v", err)
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("ping")
	if _, err = c.Write(buf); err == nil {
		_, err = io.ReadFull(c, buf)
	}
	c.Close()
	if err != nil || string(buf) != "ping" {
		t.Errorf("echo = %q, %v; want \"ping\"", buf, err)
	}
	pid := s.Pid()
	s.Stop()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d after Stop: kill(0) = %v, want ESRCH", pid, err)
	}
}

// TestMallocs asks a server that reports its allocations, twice, and one
// that does not.
func TestMallocs(t *testing.T) {
	s, err := Start(context.Background(), testServerArgv(t, "stats"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	n1, ok1, err1 := s.Mallocs()
	n2, ok2, err2 := s.Mallocs()
	if !ok1 || !ok2 || err1 != nil || err2 != nil || n1 <= 0 || n2 < n1 {
		t.Errorf("Mallocs = %d, %v, %v then %d, %v, %v; want two counts, the second no smaller", n1, ok1, err1, n2, ok2, err2)
	}

	e, err := Start(context.Background(), testServerArgv(t, "echo"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	if n, ok, err := e.Mallocs(); ok || err != nil {
		t.Errorf("Mallocs of a server without stats = %d, %v, %v; want not ok, no error", n, ok, err)
	}
	var none *Server
	if _, ok, err := none.Mallocs(); ok || err != nil {
		t.Errorf("Mallocs of no server = %v, %v", ok, err)
	}
}

func TestServerFailsToStart(t *testing.T) {
	for _, tt := range []struct {
		kind, wantErr string
	}{
		{"exit", "exited before it was ready"},
		{"silent", "printed no ready line"},
		{"bad-ready", `want "listening HOST:PORT"`},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			_, err := Start(context.Background(), testServerArgv(t, tt.kind), time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Start = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
