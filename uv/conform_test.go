package uv_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The kernel's rows of the conformance table; each kind file's area adds
// its own rows (conform_<area>_test.go).

func TestConformTrigger(t *testing.T) {
	conform.Run(t, conform.Kind{
		Name: "trigger",
		New:  func(r *reactor.Reactor) (event.Event, error) { return uv.NewTrigger(r) },
		Fire: func(ev event.Event) error { return ev.(*uv.Trigger).Send() },
		Info: regexp.MustCompile(`^Trigger\(sent=\d+, fired=\d+\)$`),
	})
}

func TestConformTimer(t *testing.T) {
	conform.Run(t, conform.Kind{
		New:     func(r *reactor.Reactor) (event.Event, error) { return uv.NewTimer(r, time.Millisecond, 0) },
		Info:    regexp.MustCompile(`^Timer\(timeout=1ms\)$`),
		OneShot: true,
	})
}

func TestConformPeriodicTimer(t *testing.T) {
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.NewTimer(r, time.Millisecond, time.Millisecond)
		},
		Info: regexp.MustCompile(`^Timer\(timeout=1ms, periodic\)$`),
	})
}

func TestConformLibuvTimer(t *testing.T) {
	conform.Run(t, conform.Kind{
		Name: "libuv-timer",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.UvtNewLibuvTimer(r, time.Millisecond)
		},
		Info:       regexp.MustCompile(`^LibuvTimer\(timeout=1ms\)$`),
		NeedsLibuv: true,
	})
}

func TestConformWorkRequest(t *testing.T) {
	conform.Run(t, conform.Kind{
		New:        func(r *reactor.Reactor) (event.Event, error) { return uv.UvtSubmitWork(r, time.Millisecond) },
		Info:       regexp.MustCompile(`^Work\(\)$`),
		OneShot:    true,
		NoStart:    true,
		NeedsLibuv: true,
	})
}
