package uv_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// A started event is held by its reactor (docs/architecture.md §5), whoever else points
// at it: the stories of programs written from the docs, on both drivers.

// collect runs the collector three times, so that any cleanup of a
// dropped reference is queued, and leaves the loop (served) to run it.
func collect() {
	for range 3 {
		runtime.GC()
	}
}

// startEchoServer sets up, in a function of its own, a listener whose
// callback starts every accepted connection with an echo reached through
// uv.IOOf, as the docs advise; only the address leaves the function.
func startEchoServer(t *testing.T, u *uv.UvtReactor) string {
	t.Helper()
	ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	_, err = event.Subscribe(ln, func(_ event.Event, res any, err error) {
		c, ok := res.(*uv.IO)
		if err != nil || !ok {
			return
		}
		event.Subscribe(c, func(ev event.Event, res any, err error) {
			if p, ok := readOf(res); ok && err == nil {
				uv.IOOf(ev).Send(p)
				return
			}
			if c := uv.IOOf(ev); c != nil {
				c.Close() // the stream ended
			}
		})
		c.Start()
	})
	uv.UvtMust(t, err)
	uv.UvtMust(t, ln.Start())
	return ln.Addr().String()
}

// echoOnce writes msg on c and reads it back.
func echoOnce(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(uv.UvtSafety)) // a safety bound, not a timing
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo of %q: %v (the server's event was closed by the collector)", msg, err)
	}
	if string(got) != msg {
		t.Fatalf("echo = %q, want %q", got, msg)
	}
}

// A listener set up in a helper function accepts after collections, and a
// connection it served, reached only through IOOf in its callback, keeps
// echoing after more of them.
func TestStartedListenerAndIOKeptAfterGC(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		addr := startEchoServer(t, u)
		collect()
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			t.Fatalf("dial after GC: %v (the listener was closed by the collector)", err)
		}
		defer c.Close()
		echoOnce(t, c, "first")
		collect()
		echoOnce(t, c, "after GC")
		collect()
		c2, err := net.Dial("tcp4", addr)
		uv.UvtMust(t, err)
		defer c2.Close()
		echoOnce(t, c2, "second client")
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A watch started in a helper function keeps reporting after collections.
func TestStartedFSEventKeptAfterGC(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		dir := t.TempDir()
		names := make(chan string, 16)
		func() {
			f, err := uv.NewFSEvent(u.Reactor, dir, uv.FSEventOptions{})
			uv.UvtMust(t, err)
			_, err = event.Subscribe(f, func(_ event.Event, res any, err error) {
				if r, ok := res.(uv.FSEventResult); ok && err == nil {
					select {
					case names <- r.Name:
					default:
					}
				}
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, f.Start())
		}()
		stop := uv.UvtServe(t, u)
		collect()
		uv.UvtMust(t, os.WriteFile(filepath.Join(dir, "after-gc"), nil, 0o600))
		if got := uv.UvtRecv(t, names, "a report after GC"); got != "after-gc" {
			t.Errorf("reported %q, want after-gc", got)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A write in flight holds its IO: an IO that is not started, dropped with
// 4 MiB queued for a peer that reads only later, delivers all of it, and
// is closed by the collector once the write is done (the peer reads the
// end of the stream).
func TestWriteInFlightKeepsIO(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		nl, err := net.Listen("tcp4", "127.0.0.1:0")
		uv.UvtMust(t, err)
		defer nl.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := nl.Accept()
			if err == nil {
				accepted <- c
			}
		}()
		stop := uv.UvtServe(t, u)
		msg := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
		func() {
			c, err := uv.Dial(waitCtx(t), u.Reactor, "tcp4", nl.Addr().String())
			uv.UvtMust(t, err)
			uv.UvtMust(t, c.Send(msg))
		}()
		peer := uv.UvtRecv(t, accepted, "the connection")
		defer peer.Close()
		collect()
		peer.SetDeadline(time.Now().Add(uv.UvtSafety)) // a safety bound, not a timing
		got, err := readAllCollecting(peer)
		if err != nil {
			t.Fatalf("peer read %d bytes, then %v", len(got), err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("peer read %d bytes, want the %d sent", len(got), len(msg))
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// readAllCollecting reads c to its end, running the collector between
// reads, so that a dropped IO is taken as soon as the rule allows.
func readAllCollecting(c net.Conn) ([]byte, error) {
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		runtime.GC()
	}
}

// A read request in flight holds its IO: with only the future held, the
// IO survives collections and the request completes with the bytes.
func TestReadAsyncInFlightKeepsIO(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		stop := uv.UvtServe(t, u)
		var f *event.Future[[]byte]
		var b *uv.IO
		func() {
			a, bb, err := uv.Pipe(u.Reactor)
			uv.UvtMust(t, err)
			b = bb
			f, err = a.ReadAsync(16)
			uv.UvtMust(t, err)
		}()
		collect()
		uv.UvtMust(t, b.Send([]byte("late")))
		got, err := event.AwaitValue[[]byte](waitCtx(t), f)
		if err != nil || string(got) != "late" {
			t.Fatalf("ReadAsync = %q, %v; want \"late\" (the IO was closed by the collector)", got, err)
		}
		uv.UvtMust(t, b.Close())
		stop()
		uv.UvtShutdown(t, u, false)
	})
}

// A file request in flight holds its File: with only the request held,
// the File (whose cleanup would close its descriptor) survives
// collections, and the read completes with the bytes.
func TestFSRequestInFlightKeepsFile(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		path := filepath.Join(t.TempDir(), "f")
		uv.UvtMust(t, os.WriteFile(path, []byte("kept"), 0o600))
		stop := uv.UvtServe(t, u)
		var q *uv.FSRequest[[]byte]
		func() {
			f, err := uv.OpenFile(waitCtx(t), u.Reactor, path, os.O_RDONLY, 0)
			uv.UvtMust(t, err)
			uv.UvtMust(t, u.Call(func() {
				q, err = f.ReadAsync(16, 0) // on the loop: it cannot complete before a later turn
			}))
			uv.UvtMust(t, err)
		}()
		collect()
		res, err := event.Await(waitCtx(t), event.Any(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := res[0].Result.([]byte); string(got) != "kept" {
			t.Fatalf("read %q, %v; want \"kept\"", got, res[0].Err)
		}
		stop()
		uv.UvtShutdown(t, u, false)
	})
}
