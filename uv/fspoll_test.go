package uv_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// pollCalls collects an FSPoll's notifications on the loop, for the test
// goroutine to read (the loop is served: a stat that sees nothing new
// tells Go nothing on the libuv driver, so no turn would end for the test
// to change the file in).
type pollCalls struct {
	mu   sync.Mutex
	got  []uv.FSPollResult
	errs []error
}

// counts returns how many changes and errors came.
func (c *pollCalls) counts() (changes, errs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got), len(c.errs)
}

func (c *pollCalls) change(i int) uv.FSPollResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[i]
}

func (c *pollCalls) err(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errs[i]
}

// growUntil grows path until the poll has reported more than n changes.
func (c *pollCalls) growUntil(t testing.TB, path string, n int, what string) uv.FSPollResult {
	t.Helper()
	uv.UvtWaitFor(t, what, func() bool {
		if got, _ := c.counts(); got > n {
			return true
		}
		grow(t, path)
		return false
	})
	return c.change(n)
}

func pollFS(t testing.TB, u *uv.UvtReactor, path string) (*uv.FSPoll, *pollCalls) {
	t.Helper()
	p, err := uv.NewFSPoll(u.Reactor, path, time.Millisecond)
	uv.UvtMust(t, err)
	c := &pollCalls{}
	_, err = p.OnChange(func(res uv.FSPollResult, err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.got = append(c.got, res)
	})
	uv.UvtMust(t, err)
	return p, c
}

// grow appends a byte to path: a change of size the next stat sees.
func grow(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	uv.UvtMust(t, err)
	_, err = f.Write([]byte("x"))
	uv.UvtMust(t, err)
	uv.UvtMust(t, f.Close())
}

// serveFor lets the served loop run for d: time for many stats, which a
// test looks at afterwards for what must not have been reported. A slow
// machine makes fewer stats; it never makes the test fail.
func serveFor(d time.Duration) { time.Sleep(d) }

// Start sets a baseline and reports nothing; a change comes with both
// stats; a removal is an error once (Prev the last stat), however many
// stats fail alike; the file back is a change from the last stat; a
// stopped poll reports nothing; a Start sets a new baseline; Close tells a
// subscriber ErrClosed.
func TestFSPollLifecycle(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		grow(t, path)
		p, c := pollFS(t, u, path)
		if got, want := p.Info(), fmt.Sprintf("FSPoll(path=%q, interval=1ms)", path); got != want {
			t.Errorf("Info = %q, want %q", got, want)
		}
		var closed atomic.Value
		event.Subscribe(p, func(_ event.Event, _ any, err error) {
			if errors.Is(err, event.ErrClosed) {
				closed.Store(err)
			}
		})
		uv.UvtServe(t, u)
		uv.UvtMust(t, p.Start())
		ch := c.growUntil(t, path, 0, "a change")
		if ch.Prev == nil || ch.Curr == nil || ch.Curr.Size() <= ch.Prev.Size() || ch.Curr.Name() != "f" || ch.Curr.Mode().Perm() != 0o600 {
			t.Fatalf("change = %+v, want the file grown, named f", ch)
		}
		if _, ok := ch.Curr.Sys().(*syscall.Stat_t); !ok {
			t.Errorf("Sys = %T, want *syscall.Stat_t", ch.Curr.Sys())
		}
		if _, errs := c.counts(); errs != 0 {
			t.Fatalf("errors: %v", c.err(0))
		}

		uv.UvtMust(t, os.Remove(path))
		uv.UvtWaitFor(t, "the removal", func() bool { _, errs := c.counts(); return errs > 0 })
		serveFor(30 * time.Millisecond)
		n, errs := c.counts()
		if errs != 1 {
			t.Fatalf("%d errors, want the removal once", errs)
		}
		err := c.err(0)
		want := fmt.Sprintf("fs_poll %s: uv_fs_poll: ", path) // then the errno's name, on either build
		if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, syscall.ENOENT) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error = %v, want one matching fs.ErrNotExist, starting %q", err, want)
		}
		grow(t, path)
		uv.UvtWaitFor(t, "the file back", func() bool { got, _ := c.counts(); return got > n })
		if back := c.change(n); back.Prev == nil || back.Curr == nil { // a stat between the create and the write sees it empty
			t.Errorf("the file back = %+v, want the last stat and the new one", back)
		}

		uv.UvtMust(t, p.Stop())
		n, _ = c.counts()
		grow(t, path)
		serveFor(10 * time.Millisecond)
		if got, _ := c.counts(); got != n {
			t.Errorf("a stopped poll reported %+v", c.change(n))
		}
		uv.UvtMust(t, p.Start())
		c.growUntil(t, path, n, "a change after a restart")
		uv.UvtMust(t, p.Close())
		if closed.Load() == nil {
			t.Error("Close: the subscriber did not hear ErrClosed")
		}
	})
}

// A path missing at Start is an error at once, with no previous stat; its
// creation is a change from none.
func TestFSPollMissingAtStart(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "later")
		p, c := pollFS(t, u, path)
		defer p.Close()
		uv.UvtServe(t, u)
		uv.UvtMust(t, p.Start())
		uv.UvtWaitFor(t, "the missing file", func() bool { _, errs := c.counts(); return errs > 0 })
		if err := c.err(0); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want fs.ErrNotExist", err)
		}
		grow(t, path)
		uv.UvtWaitFor(t, "the file made", func() bool { got, _ := c.counts(); return got > 0 })
		if got := c.change(0); got.Prev != nil || got.Curr == nil {
			t.Errorf("creation = %+v, want no previous stat and the new one", got)
		}
	})
}

// Bad arguments are refused before anything is made.
func TestFSPollRefuses(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for _, c := range []struct {
			path     string
			interval time.Duration
		}{{"", time.Second}, {"a\x00b", time.Second}, {"f", -1}, {"f", (math.MaxUint32 + 1) * time.Millisecond}} {
			if p, err := uv.NewFSPoll(u.Reactor, c.path, c.interval); !errors.Is(err, syscall.EINVAL) || p != nil {
				t.Errorf("NewFSPoll(%q, %v) = %v, %v; want EINVAL", c.path, c.interval, p, err)
			}
		}
		if _, err := uv.NewFSPoll(nil, "f", time.Second); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("NewFSPoll(nil reactor) = %v, want EINVAL", err)
		}
		p, err := uv.NewFSPoll(u.Reactor, "f", 1500*time.Microsecond)
		uv.UvtMust(t, err)
		if got := p.Interval(); got != 2*time.Millisecond {
			t.Errorf("Interval = %v, want it rounded up to 2ms", got)
		}
		uv.UvtMust(t, p.Close())
	})
}

// A hidden started poll does not keep Run going.
func TestFSPollHidden(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		p, _ := pollFS(t, u, t.TempDir())
		defer p.Close()
		uv.UvtMust(t, p.SetHidden(true))
		uv.UvtMust(t, p.Start())
		uv.UvtMust(t, u.Run(waitCtx(t)))
	})
}

// conformFSPoll runs a poll of a file through the table: removing the
// file makes it notify (an error matching fs.ErrNotExist, whether its
// first stat saw the file or not).
func conformFSPoll(t *testing.T) conform.Kind {
	root := t.TempDir()
	var n atomic.Int64
	return conform.Kind{
		Name: "fspoll",
		New: func(r *reactor.Reactor) (event.Event, error) {
			path := filepath.Join(root, strconv.FormatInt(n.Add(1), 10))
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				return nil, err
			}
			return uv.NewFSPoll(r, path, time.Millisecond)
		},
		Fire: func(ev event.Event) error { return os.Remove(ev.(*uv.FSPoll).Path()) },
		Detach: func(ev event.Event) func() error {
			path := ev.(*uv.FSPoll).Path()
			return func() error { return os.Remove(path) }
		},
		FiresWith: fs.ErrNotExist,
		Info:      regexp.MustCompile(`^FSPoll\(path=".+", interval=1ms\)$`),
	}
}
