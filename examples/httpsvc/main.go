// Command httpsvc is an HTTP service served by net/http over a uv.Listener.
// A periodic timer checks its health (the indexed directory is there); a task
// on the thread pool indexes the directory (files and bytes) in the
// background; SIGINT or SIGTERM shuts it down gracefully: requests in flight
// finish, then the reactor closes (taking back the task if it still runs).
//
//	go run ./examples/httpsvc -addr 127.0.0.1:8080 -dir . [-health 1s] [-driver libuv|go]
//
//	GET /healthz  200 while healthy, else 503; the number of checks
//	GET /index    the directory's index, 503 until it is built
//
// The service's state lives on the loop: handlers read it with r.Call.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
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
		fmt.Fprintln(os.Stderr, "httpsvc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("httpsvc", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "the address to listen on")
	dir := flags.String("dir", ".", "the directory to index")
	every := flags.Duration("health", time.Second, "the interval of the health check")
	var driver reactor.Driver
	flags.Var(&driver, "driver", "the reactor's driver: libuv, go or auto")
	if err := flags.Parse(args); err != nil {
		return err
	}
	r, err := reactor.New(reactor.Options{Driver: driver})
	if err != nil {
		return err
	}
	defer r.Close()
	go r.Serve(context.Background())
	l, err := uv.Listen(r, "tcp", *addr)
	if err != nil {
		return err
	}

	checks, healthy, index := 0, false, ""
	health, err := r.NewTimer(0, *every)
	if err != nil {
		return err
	}
	health.OnFire(func(error) {
		_, err := os.Stat(*dir)
		checks, healthy = checks+1, err == nil
	})
	health.Start()
	task, err := uv.QueueTask(r, func(ctx context.Context) (string, error) { return indexDir(ctx, *dir) })
	if err != nil {
		return err
	}
	task.OnDone(func(s string, err error) {
		if index = s; err != nil {
			index = "indexing failed: " + err.Error()
		}
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		var n int
		var ok bool
		r.Call(func() { n, ok = checks, healthy })
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(w, "healthy=%v checks=%d\n", ok, n)
	})
	mux.HandleFunc("GET /index", func(w http.ResponseWriter, _ *http.Request) {
		var s string
		r.Call(func() { s = index })
		if s == "" {
			http.Error(w, "indexing", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, s)
	})
	srv := &http.Server{Handler: mux}
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(ctx)
	}()
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// indexDir counts the regular files under dir and their bytes.
func indexDir(ctx context.Context, dir string) (string, error) {
	files, size := 0, int64(0)
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			files, size = files+1, size+info.Size()
		}
		return nil
	})
	return fmt.Sprintf("%d files, %d bytes", files, size), err
}
