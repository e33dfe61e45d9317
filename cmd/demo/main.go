// Command demo is a tour of uvevent, in five stops, each under its own
// heading:
//
//  1. the model: events with callbacks, timers one-shot and periodic, the
//     Info of live events, a future resolved from another goroutine and
//     awaited beside other events, and the replay of a stored result;
//  2. the EventInterface-style loop (package loop): an echo server on
//     127.0.0.1 with timers, stopped gracefully by a SIGTERM the demo sends
//     to itself;
//  3. a child process and a file watch;
//  4. the deadlock report;
//  5. the reactor's Stats.
//
// It is bounded (every wait has a safety timer) and exits 0, in well under
// a second. Run it with `make demo`; build it with CGO_ENABLED=0 to see the
// pure-Go driver.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// start is when the tour began; stamp gives the time since, to 10 ms.
var start = time.Now()

func stamp() string { return fmt.Sprintf("%4dms", time.Since(start).Milliseconds()/10*10) }

// heading prints a stop's title.
func heading(n int, title string) { fmt.Printf("\n== %d. %s ==\n", n, title) }

// say prints one line of a stop, indented and stamped.
func say(format string, args ...any) {
	fmt.Printf("   %s  %s\n", stamp(), fmt.Sprintf(format, args...))
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Reports (the deadlock below, for one) are shown by the tour itself.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	r, err := reactor.New(reactor.Options{Logger: quiet})
	if err != nil {
		return err
	}
	defer r.Close()
	fmt.Printf("uvevent tour, on the %s driver\n", r.Driver())

	for i, stop := range []struct {
		title string
		fn    func(context.Context, *reactor.Reactor) error
	}{
		{"The model: events, callbacks, Info, replay", tourModel},
		{"The loop interface: an echo server, timers, a signal", tourLoop},
		{"A child process and a file watch", tourSystem},
		{"The deadlock report", tourDeadlock},
	} {
		heading(i+1, stop.title)
		if err := stop.fn(ctx, r); err != nil {
			return fmt.Errorf("%s: %w", stop.title, err)
		}
	}

	heading(5, "Stats")
	s := r.Stats()
	fmt.Printf("   loop turns %d, operations queued from other goroutines %d, wake-ups %d\n", s.Iterations, s.Queued, s.Wakeups)
	fmt.Printf("   calls into the C shim %d; live now: C handles %d, active events %d, timers %d, coroutines %d\n",
		s.Crossings, s.CHandles, s.Active, s.Timers, s.Coroutines)
	if err := r.Close(); err != nil {
		return err
	}
	s = r.Stats()
	fmt.Printf("   after Close: C handles %d, active events %d\n", s.CHandles, s.Active)
	return nil
}
