// Command rerun runs a command, and runs it again each time something changes
// under a directory: the watch is recursive (directories created later are
// watched too), a burst of changes restarts the command once, when the changes
// have paused for -debounce; the running command is terminated first (SIGTERM
// to its process group, SIGKILL a second later). Its output is streamed. The
// command is one line of shell: its arguments are joined with spaces. When the
// directory goes (removed or moved away), rerun says so, ends the command and
// exits.
//
//	go run ./examples/rerun -dir . [-debounce 100ms] [-driver libuv|go] go test ./...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rerun:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("rerun", flag.ContinueOnError)
	dir := fs.String("dir", ".", "the directory to watch, recursively")
	debounce := fs.Duration("debounce", 100*time.Millisecond, "restart once changes pause this long")
	var driver reactor.Driver
	fs.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: rerun [flags] command [args...]")
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close() // terminates the command and waits for it
	var child *uv.Command
	running, restart := false, false
	var start func()
	start = func() {
		c, err := uv.NewCommand(r, strings.Join(fs.Args(), " "),
			uv.CommandOptions{Mode: uv.StreamRaw, Out: stdout, Grace: time.Second})
		if err != nil {
			fmt.Fprintf(stdout, "[rerun] %v\n", err)
			return
		}
		child, running = c, true
		c.OnDone(func(res *uv.CommandResult, _ error) {
			fmt.Fprintf(stdout, "[rerun] exit %d\n", res.ExitCode)
			if running = false; restart {
				restart = false
				start()
			}
		})
	}
	quiet, err := r.NewTimer(*debounce, 0)
	if err != nil {
		return err
	}
	quiet.OnFire(func(error) {
		if !running {
			start()
		} else if !restart {
			restart = true
			child.Terminate()
		}
	})
	w, err := uv.NewFSEvent(r, *dir, uv.FSEventOptions{Recursive: true})
	if err != nil {
		return err
	}
	w.OnChange(func(_ uv.FSEventResult, err error) {
		if errors.Is(err, uv.ErrWatchGone) {
			// Nothing left to watch: the watch has stopped; stop the
			// rest, and Run ends once the command has.
			fmt.Fprintf(stdout, "[rerun] the watched directory is gone (%v): exiting\n", err)
			quiet.Stop()
			if restart = false; running {
				child.Terminate()
			}
			return
		}
		if err != nil {
			fmt.Fprintf(stdout, "[rerun] watch: %v\n", err)
		}
		quiet.Refresh()
	})
	if err := w.Start(); err != nil {
		return err
	}
	start()
	if err := r.Run(ctx); ctx.Err() == nil { // ctx's end is the way out

		return err
	}
	return nil
}
