// Tests for m2load: a small run against an echo server it starts, a server
// that does not echo, and the reading of a resident set size. The test
// binary plays the server: run with M2LOAD_TEST_SERVER set, it becomes the
// server that variable names.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	kind := os.Getenv("M2LOAD_TEST_SERVER")
	if kind == "" {
		os.Exit(m.Run())
	}
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
		switch kind {
		case "echo":
			go io.Copy(c, c)
		case "close": // hangs up at once
			c.Close()
		}
	}
}

func testArgv(t *testing.T, kind string) []string {
	t.Setenv("M2LOAD_TEST_SERVER", kind)
	return []string{os.Args[0]}
}

func TestRun(t *testing.T) {
	line, err := run(context.Background(), "x", testArgv(t, "echo"), 20, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^M2 x conns=20 rss_bytes_per_conn=-?\d+ idle_cpu_us_per_s=\d+$`)
	if !want.MatchString(line) {
		t.Errorf("result line %q does not match %v", line, want)
	}
}

func TestRunRefusesAServerThatDoesNotEcho(t *testing.T) {
	if _, err := run(context.Background(), "x", testArgv(t, "close"), 5, 0); err == nil {
		t.Errorf("run against a server that hangs up succeeded")
	}
}

func TestVMRSS(t *testing.T) {
	rss, err := vmRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 {
		t.Errorf("vmRSS of this test = %d bytes, want at least 1 MiB", rss)
	}
	if _, err := vmRSS(-1); err == nil {
		t.Errorf("vmRSS of no process succeeded")
	}
}

func TestRaiseNoFile(t *testing.T) {
	if err := raiseNoFile(1 << 62); err == nil {
		t.Errorf("raiseNoFile of more than any hard limit succeeded")
	}
	if err := raiseNoFile(16); err != nil {
		t.Errorf("raiseNoFile(16) = %v", err)
	}
}
