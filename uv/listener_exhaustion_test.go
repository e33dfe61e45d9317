package uv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// Descriptors exhausted under a listener, with connections waiting and
// another goroutine taking each descriptor freed (as a busy program's
// other threads do; it would take the one libuv keeps in reserve): the
// listener reports one temporary error matching EMFILE per pause, its
// pauses doubling from 5 ms (http.Server's backoff), and does not spin.
// The counts decide it, not time: accept attempts equal the errors
// reported, the loop turns a bounded number of times per pause, and
// memory stays flat. Once descriptors are back, the connections that
// waited are accepted. Through OnAccept, through AcceptIO and under
// http.Serve (which backs off and goes on), on both drivers, in a child process (this test binary again) whose lowered
// RLIMIT_NOFILE touches nothing else.
func TestListenerExhaustedPauses(t *testing.T) {
	if inChild(t, "UVEVENT_ACCEPT_EMFILE_CHILD") {
		conform.EachDriver(t, exhaustedListenerChild)
	}
}

// inChild reports whether this process is the child that runs t (env set
// to 1); in the parent it runs this test binary again as that child, for t
// alone, and fails t unless the child passes.
func inChild(t *testing.T, env string) bool {
	if os.Getenv(env) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("child did not pass:\n%s", out)
	}
	t.Logf("child:\n%s", bytes.TrimSpace(out))
	return false
}

// exhaustionPauses is how many failed accepts (pauses) each path sees:
// 5+10+20+40+80 ms of pauses before the last.
const exhaustionPauses = 6

func exhaustedListenerChild(t *testing.T, d reactor.Driver) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	defer stop()
	// Three listeners, not started, each with two connections waiting.
	var lns [3]*uv.Listener
	var peers [3][]net.Conn
	for i := range lns {
		ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer ln.Close()
		lns[i] = ln
		for range 2 {
			c, err := net.Dial("tcp4", ln.Addr().String())
			uv.UvtMust(t, err)
			defer c.Close()
			peers[i] = append(peers[i], c)
		}
	}
	release := starveDescriptors(t)
	defer release()
	rss0 := residentBytes(t)
	turns0 := u.Stats().Iterations

	// OnAccept: the callback stops the listener at the last error it
	// waits for, so that the count of failed accepts is final.
	errs := make(chan error, exhaustionPauses)
	conns := make(chan *uv.IO, 2)
	n := 0
	event.Subscribe(lns[0], func(ev event.Event, res any, err error) {
		switch c, _ := res.(*uv.IO); {
		case c != nil:
			conns <- c
		case err != nil && n < exhaustionPauses:
			if n++; n == exhaustionPauses {
				ev.Stop()
			}
			errs <- err
		}
	})
	uv.UvtMust(t, lns[0].Start())
	var pauses []time.Duration
	for range exhaustionPauses {
		err := uv.UvtRecv(t, errs, "an accept error")
		checkAcceptExhausted(t, err)
		pauses = append(pauses, uv.UvtAcceptPause(err))
	}
	want := []time.Duration{5e6, 10e6, 20e6, 40e6, 80e6, 160e6}
	if !slices.Equal(pauses, want) {
		t.Errorf("OnAccept's pauses = %v, want %v", pauses, want)
	}
	if accepted, failed := uv.UvtAcceptCounts(lns[0]); accepted != 0 || failed != exhaustionPauses {
		t.Errorf("OnAccept: %d accepted, %d accepts failed; want 0 and %d (one per pause)", accepted, failed, exhaustionPauses)
	}

	// AcceptIO returns the error, as net.Listener's Accept does.
	ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
	defer cancel()
	var last time.Duration
	for i := range exhaustionPauses {
		_, err := lns[1].AcceptIO(ctx)
		checkAcceptExhausted(t, err)
		// An error nobody waited for (between two AcceptIO) may have
		// doubled the pause once more: never shorter, never past 1 s.
		if p := uv.UvtAcceptPause(err); p < last || p > time.Second || i == 0 && p != 5e6 {
			t.Errorf("AcceptIO error %d paused %v after %v", i, p, last)
		} else {
			last = p
		}
	}
	_, failed := uv.UvtAcceptCounts(lns[1])

	// http.Serve over the listener backs off and goes on: one log line per
	// error Accept returned, and Serve does not return.
	logged := make(chan string, 64)
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		ErrorLog: log.New(lineSink(logged), "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lns[2]) }()
	defer srv.Close()
	for range 3 {
		if line := uv.UvtRecv(t, logged, "http.Serve's accept error"); !strings.Contains(line, "too many open files") {
			t.Errorf("http.Serve logged %q, want an accept error it retries", line)
		}
	}
	select {
	case err := <-served:
		t.Fatalf("http.Serve returned with descriptors exhausted: %v", err)
	default:
	}
	turns := u.Stats().Iterations - turns0
	rss := residentBytes(t)
	_, failedHTTP := uv.UvtAcceptCounts(lns[2])
	t.Logf("%s: %d loop turns, %d+%d+%d failed accepts (OnAccept, AcceptIO, http.Serve), peak RSS %d -> %d KiB", d, turns, exhaustionPauses, failed, failedHTTP, rss0>>10, rss>>10)
	// A turn per pause's end, per AcceptIO's Call and per error; a spin is
	// thousands.
	failed += failedHTTP
	if limit := 8*(2*exhaustionPauses+failed) + 64; turns > limit {
		t.Errorf("%d loop turns for %d failed accepts, want at most %d", turns, exhaustionPauses+failed, limit)
	}
	if grew := rss - rss0; rss > rss0 && grew > 32<<20 {
		t.Errorf("resident memory grew by %d KiB while descriptors were exhausted", grew>>10)
	}

	// Descriptors back: the connections that waited are accepted.
	release()
	uv.UvtMust(t, lns[0].Start())
	for i := range 2 {
		c := uv.UvtRecv(t, conns, "a connection that waited, through OnAccept")
		defer c.Close()
		echoByte(t, peers[0][i], c)
	}
	for i := range 2 {
		var c *uv.IO
		for c == nil {
			var err error
			if c, err = lns[1].AcceptIO(ctx); err != nil && !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("AcceptIO once descriptors are back: %v", err)
			}
		}
		defer c.Close()
		echoByte(t, peers[1][i], c)
	}
	resp, err := http.Get("http://" + lns[2].Addr().String() + "/")
	if err != nil {
		t.Fatalf("GET through http.Serve once descriptors are back: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET through http.Serve = %s %q", resp.Status, body)
	}
}

// lineSink sends what is written to it (a log line each) on ch, dropping
// what ch has no room for.
type lineSink chan string

func (s lineSink) Write(p []byte) (int, error) {
	select {
	case s <- string(p):
	default:
	}
	return len(p), nil
}

// checkAcceptExhausted fails t unless err is the temporary error of an
// accept that found no descriptor.
func checkAcceptExhausted(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	var tmp interface{ Temporary() bool }
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) || !errors.As(err, &ne) || !errors.As(err, &tmp) || !tmp.Temporary() {
		t.Fatalf("accept with no descriptor = %v; want a temporary net.Error matching EMFILE", err)
	}
}

// starveDescriptors lowers RLIMIT_NOFILE to a few above what is open,
// takes every descriptor left, and keeps a goroutine taking each one
// freed; release ends it all (and is idempotent).
func starveDescriptors(t *testing.T) (release func()) {
	var old syscall.Rlimit
	uv.UvtMust(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old))
	lim := old
	lim.Cur = uint64(uv.UvtOpenFDs(t) + 16)
	uv.UvtMust(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	var mu sync.Mutex
	var hog []int
	take := func() bool {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		mu.Lock()
		hog = append(hog, fd)
		mu.Unlock()
		return true
	}
	for take() {
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { // the thief: a descriptor freed is taken within 50 µs
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			if !take() {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-stopped
			mu.Lock()
			for _, fd := range hog {
				syscall.Close(fd)
			}
			hog = nil
			mu.Unlock()
			syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		})
	}
}

// residentBytes is the process's peak resident set (getrusage: no
// descriptor needed).
func residentBytes(t *testing.T) uint64 {
	var ru syscall.Rusage
	uv.UvtMust(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return uint64(ru.Maxrss) << 10
}

// echoByte sends a byte from peer and reads it on c.
func echoByte(t *testing.T, peer net.Conn, c *uv.IO) {
	t.Helper()
	if _, err := peer.Write([]byte("e")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(uv.UvtSafety))
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 'e' {
		t.Errorf("read on an accepted connection = %q, %v", b, err)
	}
}
