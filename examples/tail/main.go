// Command tail follows files by name, as tail -F does: what is appended to
// each is printed as it comes (from the end of the file as it was at the
// start); a file truncated is read again from its start; a file rotated
// (renamed, then made anew at its name) is read to its end and then left for
// the new one, read from its start; a file missing is waited for. With more
// than one file, a header names the file before each run of its lines.
// The watches are events of the loop (uv.FSEvent on each file's directory;
// with -poll, for file systems inotify cannot see, a periodic timer), and
// every file operation a request of the thread pool (uv.Stat, uv.OpenFile,
// File.ReadAt, File.Stat, File.Close), awaited by the program's goroutine:
// nothing blocks the loop, and the loop makes no file system call.
//
//	go run ./examples/tail [-poll 1s] [-driver libuv|go] FILE...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
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
	f    *uv.File
	off  int64
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("tail", flag.ContinueOnError)
	poll := fset.Duration("poll", 0, "look at each file this often instead of watching its directory (NFS, FUSE)")
	var driver reactor.Driver
	fset.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		return errors.New("usage: tail [flags] file [file...]")
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	// The loop's callbacks wake the program, which looks at every file.
	wake := make(chan struct{}, 1)
	changed := func() {
		select {
		case wake <- struct{}{}:
		default: // a look is due already
		}
	}
	for _, name := range fset.Args() {
		if err := watch(r, name, *poll, changed); err != nil {
			return err
		}
	}
	go r.Serve(context.Background()) // until r.Close
	var last *followed               // whose bytes were printed last, for the headers
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
		f, err := uv.OpenFile(ctx, r, fl.name, os.O_RDONLY, 0)
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
		q, err := uv.Stat(ctx, r, fl.name)
		var fi fs.FileInfo
		if err == nil {
			fi, err = q.Await(ctx)
		}
		switch {
		case fl.f == nil && err == nil:
			open(fl, false)
		case fl.f == nil:
		default:
			cur, _ := fl.f.Stat()
			switch {
			case err != nil || cur == nil || fi.Sys().(*syscall.Stat_t).Ino != cur.Sys().(*syscall.Stat_t).Ino:
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
		case <-wake:
			for _, fl := range files {
				check(fl)
			}
		}
	}
}

// watch calls changed on the loop whenever name may have changed: an
// FSEvent on its directory names it, or, with poll, every poll. (An
// FSPoll would say when the file's stat changes, but only from its first
// stat, taken on the pool after its Start: an append before that one
// would go unseen until the next.)
func watch(r *reactor.Reactor, name string, poll time.Duration, changed func()) error {
	if poll > 0 {
		t, err := r.NewTimer(poll, poll)
		if err != nil {
			return err
		}
		t.OnFire(func(error) { changed() })
		return t.Start()
	}
	w, err := uv.NewFSEvent(r, filepath.Dir(name), uv.FSEventOptions{})
	if err != nil {
		return err
	}
	w.OnChange(func(ch uv.FSEventResult, err error) {
		if err != nil || ch.Name == filepath.Base(name) {
			changed()
		}
	})
	return w.Start()
}
