package uv_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// ioFuzzReader reads the far end of a stream in chunks of random sizes,
// and can be held (a stalled peer) and let go.
type ioFuzzReader struct {
	c     *uv.IO
	sizes []byte
	mu    sync.Mutex
	gate  *sync.Cond
	held  bool
	got   bytes.Buffer
	err   error
	done  chan struct{}
}

func (r *ioFuzzReader) hold(on bool) {
	r.mu.Lock()
	r.held = on
	r.mu.Unlock()
	r.gate.Broadcast()
}

func (r *ioFuzzReader) run() {
	defer close(r.done)
	buf := make([]byte, 1<<16)
	for i := 0; ; i++ {
		r.mu.Lock()
		for r.held {
			r.gate.Wait()
		}
		r.mu.Unlock()
		n := 1 << 16
		if len(r.sizes) > 0 {
			n = int(r.sizes[i%len(r.sizes)])*97%(1<<16) + 1
		}
		k, err := r.c.Read(buf[:n])
		r.mu.Lock()
		r.got.Write(buf[:k])
		r.mu.Unlock()
		if err != nil {
			r.err = err
			return
		}
	}
}

// ioFuzzChunk is the k-th write's bytes: each byte says which write it
// belongs to and where in it, so that a stray byte is told from a right one.
func ioFuzzChunk(k, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(k*31 + i%251)
	}
	return p
}

// runIOFuzz plays one input on a connected pair: the writer writes chunks
// of random sizes, some with a write deadline, while the peer reads in
// random chunks, stalls, resumes, half-closes or resets; in the end exactly
// the bytes the writes reported written must have arrived, in order (all of
// them after a half-close; a prefix of them after a reset).
func runIOFuzz(t *testing.T, d reactor.Driver, data []byte) {
	u := uv.UvtNewReactorOn(t, d)
	stop := uv.UvtServe(t, u)
	w, peer, err := uv.Pipe(u.Reactor)
	if err != nil {
		t.Fatalf("Pipe: %v", err)
	}
	split := len(data) / 2
	rd := &ioFuzzReader{c: peer, sizes: data[split:], done: make(chan struct{})}
	rd.gate = sync.NewCond(&rd.mu)
	go rd.run()
	var sent bytes.Buffer // what the writes reported written
	timedOut := false
	reset, halfClosed := false, false
	ops := data[:split]
	for k := 0; len(ops) >= 2 && !reset && !halfClosed; k++ {
		op, arg := ops[0]%6, int(ops[1])
		ops = ops[2:]
		switch op {
		case 0, 1: // a write; with a deadline when the peer is held (or asked)
			n := (arg%64 + 1) * (1 + arg%7*1024)
			rd.mu.Lock()
			held := rd.held
			rd.mu.Unlock()
			dl := op == 1 || held
			if dl {
				w.SetWriteDeadline(time.Now().Add(time.Duration(arg%4) * time.Millisecond))
			}
			p := ioFuzzChunk(k, n)
			m, err := w.Write(p)
			if dl {
				w.SetWriteDeadline(time.Time{})
			}
			if m < 0 || m > n {
				t.Fatalf("write %d: Write returned n=%d of %d", k, m, n)
			}
			sent.Write(p[:m])
			if err != nil {
				timedOut = true
			}
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("write %d: Write(%d) = %d, %v", k, n, m, err)
			}
			if err == nil && m != n {
				t.Fatalf("write %d: Write(%d) = %d, nil: short without an error", k, n, m)
			}
		case 2:
			rd.hold(true)
		case 3:
			rd.hold(false)
		case 4: // the writer half-closes: the peer reads the end
			rd.hold(false) // CloseWrite waits for the queued bytes to go out
			if err := w.CloseWrite(); err != nil {
				t.Fatalf("CloseWrite: %v", err)
			}
			halfClosed = true
		case 5: // the peer resets: it closes with bytes unread
			rd.hold(false)
			peer.Close()
			reset = true
		}
	}
	if !reset && !halfClosed {
		rd.hold(false)
		if err := w.CloseWrite(); err != nil {
			t.Fatalf("CloseWrite: %v", err)
		}
	}
	if halfClosed {
		// Writes after CloseWrite fail, and write nothing.
		if m, err := w.Write([]byte("late")); err == nil || m != 0 {
			t.Errorf("Write after CloseWrite = %d, %v; want 0 and an error", m, err)
		}
	}
	rd.hold(false)
	uv.UvtRecv(t, rd.done, "the reader's end")
	rd.mu.Lock()
	got := rd.got.Bytes()
	rd.mu.Unlock()
	want := sent.Bytes()
	if timedOut && len(got) > len(want) {
		t.Errorf("on the %v driver, after a write timed out, %d bytes beyond those reported written arrived: the peer read %d, the writes reported %d",
			d, len(got)-len(want), len(got), len(want))
	}
	switch {
	case reset:
		if !bytes.HasPrefix(want, got) {
			t.Errorf("after a reset the peer read %d bytes that are not a prefix of the %d written (first difference at %d)",
				len(got), len(want), firstDiff(got, want))
		}
	case !errors.Is(rd.err, io.EOF):
		t.Errorf("the peer's Read ended with %v, want io.EOF", rd.err)
	case !bytes.Equal(got, want):
		t.Errorf("the peer read %d bytes, the writes reported %d written (first difference at %d)",
			len(got), len(want), firstDiff(got, want))
	}
	w.Close()
	peer.Close()
	stop()
	uv.UvtShutdown(t, u, false)
}

// FuzzIO drives a stream pair with random chunking, random peer behaviour
// (slow reads, stalls, half-close, reset) and random write deadlines, on
// each driver, and checks that exactly the bytes the writes reported
// written arrive.
func FuzzIO(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3, 4, 0, 7, 9, 200, 1})
	f.Add([]byte{0, 63, 0, 62, 0, 61, 0, 60, 1, 1, 3, 50, 100})                // big writes, small reads
	f.Add([]byte{2, 0, 1, 63, 1, 62, 3, 0, 0, 5, 255, 255})                    // writes with deadlines to a stalled peer
	f.Add([]byte{0, 20, 2, 0, 0, 5, 5, 0, 1, 2, 3})                            // reset while held
	f.Add([]byte{2, 0, 0, 63, 1, 0, 3, 0, 0, 1, 4, 0, 0, 9, 1, 8, 7, 6, 5, 4}) // stall, time out, resume, half-close
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 200 {
			return
		}
		for _, d := range conform.Drivers {
			if !conform.Available(d) {
				continue // no libuv in this build
			}
			runIOFuzz(t, d, data)
			if t.Failed() {
				t.Fatalf("on the %v driver", d)
			}
		}
	})
}
