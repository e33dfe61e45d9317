package caller

import (
	"strings"
	"testing"
)

func site() string { return Site() }

func TestSiteNamesTheCaller(t *testing.T) {
	got := site() // this line
	if !strings.HasPrefix(got, "caller/caller_test.go:") {
		t.Errorf("Site = %q, want this test's line", got)
	}
	var s Stack
	if s.Site() != "" {
		t.Errorf("an empty stack names %q", s.Site())
	}
}

func TestSkipsTheModulesPackages(t *testing.T) {
	for fn, want := range map[string]bool{
		"github.com/uvevent/uvevent/event.Await":           true,
		"github.com/uvevent/uvevent/async.(*Scope).Wait":   true,
		"github.com/uvevent/uvevent/reactor.start[...]":    true,
		"github.com/uvevent/uvevent/event_test.TestX":      false,
		"github.com/uvevent/uvevent/internal/caller.TestY": false,
		"main.main": false,
	} {
		if got := inside(fn); got != want {
			t.Errorf("inside(%q) = %v", fn, got)
		}
	}
	if got := short("/a/b/c/file.go"); got != "c/file.go" {
		t.Errorf("short = %q", got)
	}
}
