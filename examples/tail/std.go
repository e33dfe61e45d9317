//go:build ignore

// Command tail, with the standard library and fsnotify: the twin of
// main.go. It follows files by name, as tail -F does: appends printed,
// a truncated file read again from its start, a rotated one read to its
// end and then left for the new one, a missing one waited for; headers
// name the file when there is more than one. One goroutine does it all,
// woken by fsnotify's events on each file's directory or, with -poll, by a
// ticker.
//
//	go run examples/tail/std.go [-poll 1s] FILE...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tail:", err)
		os.Exit(1)
	}
}

// followed is one file followed by name: the file open at the name (nil
// while there is none) and how far it has been read.
type followed struct {
	name string
	f    *os.File
	off  int64
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("tail", flag.ContinueOnError)
	poll := fset.Duration("poll", 0, "look at each file this often instead of watching its directory (NFS, FUSE)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		return errors.New("usage: tail [flags] file [file...]")
	}
	var last *followed // whose bytes were printed last, for the headers
	read := func(fl *followed) {
		buf := make([]byte, 64<<10)
		for {
			n, _ := fl.f.ReadAt(buf, fl.off)
			if n == 0 {
				return
			}
			if fset.NArg() > 1 && last != fl {
				fmt.Fprintf(stdout, "==> %s <==\n", fl.name)
			}
			last = fl
			stdout.Write(buf[:n])
			fl.off += int64(n)
		}
	}
	// open follows the file now at fl's name, read from its start (or,
	// at the start, from its end).
	open := func(fl *followed, atStart bool) {
		f, err := os.Open(fl.name)
		if err != nil {
			if atStart {
				fmt.Fprintf(stdout, "[tail] %s: not there yet, waiting for it\n", fl.name)
			}
			return
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return
		}
		fl.f, fl.off = f, 0
		if atStart {
			fl.off = fi.Size()
			fmt.Fprintf(stdout, "[tail] %s: following\n", fl.name)
			return
		}
		fmt.Fprintf(stdout, "[tail] %s: following a new file\n", fl.name)
		read(fl)
	}
	// check looks at what is at fl's name now.
	check := func(fl *followed) {
		fi, err := os.Stat(fl.name)
		switch {
		case fl.f == nil && err == nil:
			open(fl, false)
		case fl.f == nil:
		default:
			cur, _ := fl.f.Stat()
			switch {
			case err != nil || !os.SameFile(fi, cur):
				read(fl)
				fl.f.Close()
				if fl.f = nil; err == nil {
					open(fl, false)
				}
			case fi.Size() < fl.off:
				fmt.Fprintf(stdout, "[tail] %s: file truncated\n", fl.name)
				fl.off = 0
				fallthrough
			default:
				read(fl)
			}
		}
	}
	var files []*followed
	var events <-chan fsnotify.Event
	var errs <-chan error
	var tick <-chan time.Time
	if *poll > 0 {
		t := time.NewTicker(*poll)
		defer t.Stop()
		tick = t.C
	} else {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		defer w.Close()
		for _, name := range fset.Args() {
			if err := w.Add(filepath.Dir(name)); err != nil {
				return err
			}
		}
		events, errs = w.Events, w.Errors
	}
	for _, name := range fset.Args() {
		fl := &followed{name: name}
		files = append(files, fl)
		open(fl, true)
	}
	defer func() {
		for _, fl := range files {
			if fl.f != nil {
				fl.f.Close()
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			for _, fl := range files {
				if ev.Name == filepath.Clean(fl.name) {
					check(fl)
				}
			}
		case <-errs:
			for _, fl := range files {
				check(fl)
			}
		case <-tick:
			for _, fl := range files {
				check(fl)
			}
		}
	}
}
