// Tests for h1load: a short bounded load against a server it starts, with
// and without keep-alive, and a server whose answers are refused. The test
// binary plays the server: run with H1LOAD_TEST_SERVER set, it becomes the
// server that variable names.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	status := http.StatusOK
	switch os.Getenv("H1LOAD_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "ok":
	case "fail":
		status = http.StatusInternalServerError
	default:
		os.Exit(99)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte("hello"))
	}))
	os.Exit(1)
}

func testConfig(t *testing.T, kind string, closeEach bool) config {
	t.Setenv("H1LOAD_TEST_SERVER", kind)
	return config{impl: "x", server: []string{os.Args[0]}, conns: 4, requests: 40,
		duration: 30 * time.Second, closeEach: closeEach}
}

func TestRunBounded(t *testing.T) {
	for _, tt := range []struct {
		closeEach bool
		workload  string
	}{{false, "H1"}, {true, "H1C"}} {
		line, err := run(context.Background(), testConfig(t, "ok", tt.closeEach))
		if err != nil {
			t.Fatalf("close=%v: %v", tt.closeEach, err)
		}
		want := regexp.MustCompile(`^` + tt.workload + ` x reqs_per_s=\d+ p50_us=\d+ p99_us=\d+ server_cpu_us_per_req=\d+\.\d\d$`)
		if !want.MatchString(line) {
			t.Errorf("close=%v: result line %q does not match %v", tt.closeEach, line, want)
		}
	}
}

func TestRunRefusesFailedAnswers(t *testing.T) {
	_, err := run(context.Background(), testConfig(t, "fail", false))
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("run against a server answering 500 = %v, want an error naming the status", err)
	}
}
