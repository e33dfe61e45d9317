package caller

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func site() string { return Site() }

func TestSiteNamesTheCaller(t *testing.T) {
	if got := site(); !strings.HasPrefix(got, "caller/caller_test.go:") {
		t.Errorf("Site = %q, want this test's line", got)
	}
}

// Waiting finds where a parked goroutine waits, by its number.
func TestWaitingNamesTheLine(t *testing.T) {
	type where struct {
		id   int64
		line int
	}
	ids := make(chan where)
	block := make(chan struct{})
	go func() {
		_, _, line, _ := runtime.Caller(0)
		ids <- where{Goroutine(), line + 2}
		<-block
	}()
	w := <-ids
	want := "caller/caller_test.go:" + strconv.Itoa(w.line)
	var got string
	for range 1000 { // until the goroutine has parked on block
		if got = Waiting()[w.id]; got == want {
			break
		}
		runtime.Gosched()
	}
	close(block)
	if got != want {
		t.Errorf("Waiting()[%d] = %q, want %q", w.id, got, want)
	}
}

func TestSkipsTheModulesPackages(t *testing.T) {
	for fn, want := range map[string]bool{
		"github.com/uvevent/uvevent/event.Await":           true,
		"github.com/uvevent/uvevent/async.(*Scope).Wait":   true,
		"github.com/uvevent/uvevent/reactor.start[...]":    true,
		"runtime.gopark(0x1)":                              true,
		"sync.(*Mutex).Lock(...)":                          true,
		"github.com/uvevent/uvevent/eventkind.Notify(...)": true,
		"github.com/uvevent/uvevent/eventkind_test.TestZ":  false,
		"sync.(*WaitGroup).Wait(0x1)":                      true,
		"github.com/uvevent/uvevent/syncx.Lock()":          false,
		"github.com/uvevent/uvevent/event_test.TestX":      false,
		"github.com/uvevent/uvevent/internal/caller.TestY": false,
		"main.main()": false,
	} {
		if got := skipped(fn); got != want {
			t.Errorf("skipped(%q) = %v", fn, got)
		}
	}
	if got := short("/a/b/c/file.go"); got != "c/file.go" {
		t.Errorf("short = %q", got)
	}
}
