package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uvevent/uvevent/examples/extest"
)

// start runs the service on driver with args and returns the run and its
// base URL.
func start(t *testing.T, driver string, args ...string) (*extest.Program, string) {
	t.Helper()
	p := extest.Start(t, driver, run, append([]string{"-addr", "127.0.0.1:0", "-driver", driver}, args...)...)
	return p, "http://" + p.Listening(t)
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
	deadline := time.Now().Add(extest.Safety)
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
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			dir := t.TempDir()
			for i, size := range []int{10, 200, 3000} {
				sub := filepath.Join(dir, fmt.Sprint("d", i))
				os.MkdirAll(sub, 0o755)
				if err := os.WriteFile(filepath.Join(sub, "f"), make([]byte, size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, url := start(t, d, "-dir", dir, "-health", "5ms")
			c := &http.Client{Timeout: extest.Safety}
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
			p.Cancel()
			p.Wait(t)
			host := strings.TrimPrefix(url, "http://")
			if conn, err := net.Dial("tcp", host); err == nil {
				conn.Close()
				t.Fatalf("dial %s after the shutdown: connected", host)
			}
		})
	}
}
