package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// safety bounds every wait: a test that reaches it has hung, and fails.
const safety = 30 * time.Second

var drivers = []string{"libuv", "go"}

// needDriver skips the test when this build lacks the driver, with the reason.
func needDriver(t *testing.T, name string) {
	t.Helper()
	var d reactor.Driver
	if err := d.Set(name); err != nil {
		t.Fatal(err)
	}
	r, err := reactor.New(reactor.Options{Driver: d})
	if errors.Is(err, reactor.ErrNoLibuv) {
		t.Skipf("the %s driver is not in this build: %v", name, err)
	} else if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// start runs the service and returns its base URL, the cancel that shuts it
// down and the channel run's error comes on.
func start(t *testing.T, driver string, args ...string) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	needDriver(t, driver)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-driver", driver}, args...), pw)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		t.Fatalf("run: %v", <-done)
	}
	t.Cleanup(cancel)
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), cancel, done
}

// get returns the status and body of url.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// until polls url until ok says yes to its status and body.
func until(t *testing.T, c *http.Client, url string, ok func(status int, body string) bool) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for {
		code, body := get(t, c, url)
		if ok(code, body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q, still", url, code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestHTTPServiceHealthIndexAndShutdown(t *testing.T) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			for i, size := range []int{10, 200, 3000} {
				sub := filepath.Join(dir, fmt.Sprint("d", i))
				os.MkdirAll(sub, 0o755)
				if err := os.WriteFile(filepath.Join(sub, "f"), make([]byte, size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			url, cancel, done := start(t, d, "-dir", dir, "-health", "5ms")
			c := &http.Client{Timeout: safety}
			until(t, c, url+"/index", func(code int, body string) bool {
				return code == 200 && body == "3 files, 3210 bytes\n"
			})
			until(t, c, url+"/healthz", func(code int, body string) bool { // checked again and again
				var n int
				_, err := fmt.Sscanf(body, "healthy=true checks=%d\n", &n)
				return code == 200 && err == nil && n >= 3
			})
			os.RemoveAll(dir)
			until(t, c, url+"/healthz", func(code int, body string) bool {
				return code == 503 && strings.HasPrefix(body, "healthy=false")
			})

			// c keeps an idle connection: the shutdown closes it and returns
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run: %v", err)
				}
			case <-time.After(safety):
				t.Fatal("run did not return")
			}
			host := strings.TrimPrefix(url, "http://")
			if conn, err := net.Dial("tcp", host); err == nil {
				conn.Close()
				t.Fatalf("dial %s after the shutdown: connected", host)
			}
		})
	}
}
