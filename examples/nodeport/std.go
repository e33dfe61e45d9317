//go:build ignore

// The standard library's twin of nodeport (main.go), for comparison: the
// same Node.js program ported to plain Go, with a select loop over a ticker, a
// timer, os/signal and github.com/fsnotify/fsnotify, and os/exec for the
// children, whose ends come back to the loop on a channel. It needs its own
// module with fsnotify in it (go get github.com/fsnotify/fsnotify).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nodeport:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("nodeport", flag.ContinueOnError)
	dir := flags.String("dir", ".", "the directory to watch")
	cmd := flags.String("cmd", "ls | wc -l", "the shell command to run on each change")
	tick := flags.Duration("tick", time.Second, "the heartbeat's interval")
	limit := flags.Duration("limit", time.Minute, "stop after this long")
	if err := flags.Parse(args); err != nil {
		return err
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer watcher.Close()
	if err := watcher.Add(*dir); err != nil {
		return err
	}
	heartbeat := time.NewTicker(*tick)
	defer heartbeat.Stop()
	deadline := time.NewTimer(*limit)
	defer deadline.Stop()
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, syscall.SIGINT)
	defer signal.Stop(sigint)

	exits := make(chan string)
	running, ticks := 0, 0
	beats, events := heartbeat.C, watcher.Events
	stop := func() {
		heartbeat.Stop()
		deadline.Stop()
		watcher.Close()
		signal.Stop(sigint)
		fmt.Fprintln(stdout, "bye")
		beats, events = nil, nil
	}
	for events != nil || running > 0 {
		select {
		case <-beats:
			ticks++
			fmt.Fprintf(stdout, "tick %d\n", ticks)
		case ev := <-events:
			fmt.Fprintf(stdout, "%s %s\n", nodeType(ev.Op), strings.TrimPrefix(ev.Name, *dir+"/"))
			child := exec.Command("sh", "-c", *cmd)
			child.Dir, child.Stdout, child.Stderr = *dir, stdout, os.Stderr
			if err := child.Start(); err != nil {
				fmt.Fprintf(stdout, "%s: %v\n", *cmd, err)
				continue
			}
			running++
			go func() {
				child.Wait()
				exits <- fmt.Sprintf("%s: exit %d\n", *cmd, child.ProcessState.ExitCode())
			}()
		case msg := <-exits:
			running--
			fmt.Fprint(stdout, msg)
		case <-deadline.C:
			stop()
		case <-sigint:
			stop()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// nodeType names an fsnotify operation as fs.watch does: "change" for a
// write or a chmod, "rename" for the rest (a file made, moved or removed).
func nodeType(op fsnotify.Op) string {
	if op.Has(fsnotify.Write) || op.Has(fsnotify.Chmod) {
		return "change"
	}
	return "rename"
}
