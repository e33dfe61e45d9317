//go:build ignore

// The standard library's twin of rerun (main.go), for comparison: os/exec for
// the command and github.com/fsnotify/fsnotify for the watch, which is not
// recursive, so the program adds each directory itself. It needs its own module
// with fsnotify in it (go get github.com/fsnotify/fsnotify).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
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
	flags := flag.NewFlagSet("rerun", flag.ContinueOnError)
	dir := flags.String("dir", ".", "the directory to watch, recursively")
	debounce := flags.Duration("debounce", 100*time.Millisecond, "restart once changes pause this long")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() == 0 {
		return errors.New("usage: rerun [flags] command [args...]")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	addTree := func(root string) error {
		return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = w.Add(path)
			}
			return err
		})
	}
	if err := addTree(*dir); err != nil {
		return err
	}
	var cancel context.CancelFunc = func() {}
	exited := make(chan struct{})
	close(exited) // no command yet
	start := func() {
		var cctx context.Context
		cctx, cancel = context.WithCancel(ctx)
		cmd := exec.CommandContext(cctx, "sh", "-c", strings.Join(flags.Args(), " "))
		cmd.Stdout, cmd.Stderr = stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // signal what it starts too
		cmd.Cancel = func() error {
			time.AfterFunc(time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(stdout, "[rerun] %v\n", err)
			return
		}
		exited = make(chan struct{})
		go func(exited chan struct{}) {
			cmd.Wait()
			fmt.Fprintf(stdout, "[rerun] exit %v\n", cmd.ProcessState)
			close(exited)
		}(exited)
	}
	start()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	for {
		select {
		case ev := <-w.Events:
			if ev.Has(fsnotify.Remove) && filepath.Clean(ev.Name) == filepath.Clean(*dir) {
				// Nothing left to watch (fsnotify has dropped the watch).
				fmt.Fprintf(stdout, "[rerun] the watched directory is gone (%s): exiting\n", ev.Name)
				quiet.Stop()
				cancel()
				<-exited
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					addTree(ev.Name)
				}
			}
			quiet.Reset(*debounce)
		case err := <-w.Errors:
			fmt.Fprintf(stdout, "[rerun] watch: %v\n", err)
		case <-quiet.C:
			cancel()
			<-exited
			start()
		case <-ctx.Done():
			cancel()
			<-exited
			return nil
		}
	}
}
