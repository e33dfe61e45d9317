//go:build ignore

// The standard library's twin of httpsvc (main.go), for comparison: a
// net.Listener, a time.Ticker goroutine for the health check, a goroutine for
// the index, and a mutex over the state the handlers read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
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
	if err := flags.Parse(args); err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	bg, cancelBg := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancelBg()

	var mu sync.Mutex
	checks, healthy, index := 0, false, ""
	wg.Add(2)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(*every)
		defer tick.Stop()
		for {
			_, err := os.Stat(*dir)
			mu.Lock()
			checks, healthy = checks+1, err == nil
			mu.Unlock()
			select {
			case <-tick.C:
			case <-bg.Done():
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		s, err := indexDir(bg, *dir)
		if err != nil {
			s = "indexing failed: " + err.Error()
		}
		mu.Lock()
		index = s
		mu.Unlock()
	}()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n, ok := checks, healthy
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(w, "healthy=%v checks=%d\n", ok, n)
	})
	mux.HandleFunc("GET /index", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		s := index
		mu.Unlock()
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
