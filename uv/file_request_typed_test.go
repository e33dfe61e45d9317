package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestFSRequestTypedResults: a write's request gives its count as an int
// and a read's its bytes as a []byte, through Await, Outcome, OnDone (a
// completed request replays to it) and the typed waits, taking a slice
// of requests as it is, on each driver.
func TestFSRequestTypedResults(t *testing.T) {
	type seen struct {
		Written      int
		WrittenOK    bool
		Read         string
		ReadOutcome  string
		OnDone       string
		AwaitAll     []string
		WriteErr     error
		ReadErr      error
		OnDoneOnLoop bool
	}
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		ctx := waitCtx(t)
		f, err := uv.OpenFile(ctx, u.Reactor, filepath.Join(t.TempDir(), "typed"), os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		var got seen
		w, err := f.WriteAsync([]byte("hello typed"), 0)
		uv.UvtMust(t, err)
		got.Written, got.WriteErr = w.Await(ctx)
		_, got.WrittenOK, _ = w.Outcome()
		r, err := f.ReadAsync(5, 0)
		uv.UvtMust(t, err)
		var b []byte
		b, got.ReadErr = r.Await(ctx)
		got.Read = string(b)
		b, _, _ = r.Outcome()
		got.ReadOutcome = string(b)
		var mu sync.Mutex
		done := make(chan struct{})
		_, err = r.OnDone(func(p []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			got.OnDone, got.OnDoneOnLoop = fmt.Sprintf("%q %v", p, err), u.Owner().Owned()
			close(done)
		})
		uv.UvtMust(t, err)
		<-done
		var reads []*uv.FSRequest[[]byte]
		for _, off := range []int64{0, 6} {
			q, err := f.ReadAsync(5, off)
			uv.UvtMust(t, err)
			reads = append(reads, q)
		}
		all, err := event.AwaitAll(ctx, reads...)
		uv.UvtMust(t, err)
		for _, p := range all {
			got.AwaitAll = append(got.AwaitAll, string(p))
		}
		uv.UvtMust(t, f.Close())
		stop()
		mu.Lock()
		defer mu.Unlock()
		want := seen{
			Written: 11, WrittenOK: true, Read: "hello", ReadOutcome: "hello",
			OnDone: `"hello" <nil>`, OnDoneOnLoop: true, AwaitAll: []string{"hello", "typed"},
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
			t.Errorf("typed results differ (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// TestFSRequestAwaitEndsAndClose: a write queued behind a full pool is
// waited for with contexts that end first (the wait gives the context's
// error, the request goes on), then closed: the close cancels it (the file
// stays empty), Await gives an error matching event.ErrClosed, Outcome
// has none, and OnDone
// hears of it only with event.WithClose, on each driver.
func TestFSRequestAwaitEndsAndClose(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "target")
		stop := uv.UvtServe(t, u)
		f, err := uv.OpenFile(waitCtx(t), u.Reactor, path, os.O_RDWR|os.O_CREATE, 0o600)
		uv.UvtMust(t, err)
		blockers, _, release := holdPool(t, u)
		w, err := f.WriteAsync([]byte("must not be written"), 0)
		uv.UvtMust(t, err)
		var mu sync.Mutex
		var heard []string
		for _, name := range []string{"plain", "WithClose"} {
			var opts []event.OnOption
			if name == "WithClose" {
				opts = append(opts, event.WithClose)
			}
			_, err := w.OnDone(func(n int, err error) {
				mu.Lock()
				defer mu.Unlock()
				heard = append(heard, fmt.Sprintf("%s: %d %v", name, n, errors.Is(err, event.ErrClosed)))
			}, opts...)
			uv.UvtMust(t, err)
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if n, err := w.Await(cancelled); n != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("Await(cancelled) = %d, %v; want 0, context.Canceled", n, err)
		}
		if w.Flags().Has(event.Closed) {
			t.Error("a wait whose context ended closed the request")
		}
		if n, ok, err := w.Outcome(); ok || n != 0 || err != nil {
			t.Errorf("Outcome of a queued write = %d, %v, %v; want 0, false, nil", n, ok, err)
		}
		uv.UvtMust(t, w.Close())
		if n, err := w.Await(waitCtx(t)); n != 0 || !errors.Is(err, event.ErrClosed) {
			t.Errorf("Await after Close = %d, %v; want 0, event.ErrClosed", n, err)
		}
		if n, ok, err := w.Outcome(); ok || n != 0 || err != nil {
			t.Errorf("Outcome after Close = %d, %v, %v; want none: it never completes", n, ok, err)
		}
		letPoolGo(t, blockers, release)
		uv.UvtMust(t, f.Close())
		stop()
		if onDisk, _ := os.ReadFile(path); len(onDisk) != 0 {
			t.Errorf("the closed write ran: the file holds %q", onDisk)
		}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"WithClose: 0 true"}, heard); diff != "" {
			t.Errorf("OnDone heard (-want +got):\n%s", diff)
		}
		uv.UvtShutdown(t, u, false)
	})
}

// blockedFIFORead is a read request of u blocked on a FIFO nobody writes
// to (its File holds both ends), released at cleanup.
func blockedFIFORead(t *testing.T, u *uv.UvtReactor) *uv.FSRequest[[]byte] {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := uv.OpenFile(waitCtx(t), u.Reactor, fifo, os.O_RDWR, 0) // never blocks on Linux
	if err != nil {
		t.Fatal(err)
	}
	q, err := f.ReadAsync(8, -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // a reader is there: it does not block
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.Write([]byte("x"))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		if _, err := q.Await(ctx); err != nil {
			t.Errorf("the blocked read did not complete: %v", err)
		}
		f.Close()
	})
	return q
}
