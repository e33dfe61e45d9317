package uv_test

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// Attacks on the write lane's hand-back (laneWanted): callers writing back
// to back through the lane while the loop takes it back for a Close, a
// CloseWrite, a write deadline set in the past, Sends from callbacks, or
// the reactor's Close.

// laneStormWriters is how many goroutines write back to back; laneStormID
// is the first byte of every write of writer w (laneStormID+w), the Sends'
// being laneStormID+laneStormWriters.
const (
	laneStormWriters = 6
	laneStormID      = 0xA0
)

// laneStormPayload is the k-th write of writer w: its first byte names the
// writer, the rest tells its bytes from any other write's. Most are small;
// every 64th is large enough to go out through the lane in part (held).
func laneStormPayload(w, k int) []byte {
	size := 1 + (k*37)%61
	if k%64 == 63 {
		size = 96<<10 + k%1000
	}
	p := make([]byte, size)
	p[0] = byte(laneStormID + w)
	for j := 1; j < size; j++ {
		p[j] = byte(w*29 + k*13 + j*7)
	}
	return p
}

// laneStormCheck checks the peer's stream against what each writer's
// writes reported (ns[w][k] bytes of laneStormPayload(w, k)): the stream
// is those prefixes, each contiguous (no byte of another write inside
// one), each writer's in its order, every byte once. With clean set (the
// stream ended cleanly), every byte reported is there; else (a reset) the
// stream may end early, inside a write.
func laneStormCheck(t *testing.T, stream []byte, ns [][]int, clean bool) {
	t.Helper()
	next := make([]int, len(ns))
	for w := range ns {
		for next[w] < len(ns[w]) && ns[w][next[w]] == 0 {
			next[w]++
		}
	}
	for pos := 0; pos < len(stream); {
		w := int(stream[pos]) - laneStormID
		if w < 0 || w >= len(ns) || next[w] >= len(ns[w]) {
			t.Fatalf("byte %d of the stream (%#x) starts no write reported: %s", pos, stream[pos], laneStormWhere(stream[pos:], ns, next))
		}
		k := next[w]
		p := laneStormPayload(w, k)[:ns[w][k]]
		end := min(pos+len(p), len(stream))
		if string(stream[pos:end]) != string(p[:end-pos]) {
			t.Fatalf("bytes %d-%d of the stream are not writer %d's write %d (%d bytes reported)", pos, end, w, k, len(p))
		}
		if end-pos < len(p) {
			if clean {
				t.Fatalf("stream ended inside writer %d's write %d: %d of its %d bytes reported", w, k, end-pos, len(p))
			}
			return
		}
		pos = end
		for next[w]++; next[w] < len(ns[w]) && ns[w][next[w]] == 0; next[w]++ {
		}
	}
	if clean {
		for w := range ns {
			if next[w] < len(ns[w]) {
				t.Errorf("writer %d's write %d (%d bytes reported) never reached the peer", w, next[w], ns[w][next[w]])
			}
		}
	}
}

// TestLaneAttackStorm: writers write back to back on one IO, big writes
// among small ones, while its peer reads; once bytes flow, the loop takes
// the lane back for one of its reasons. Every Write returns; a Write that
// failed reports exactly the bytes that reach the peer (a Write that
// succeeded, all of them); no byte of another write goes out inside one;
// no byte is written twice or lost; no socket is left.
func TestLaneAttackStorm(t *testing.T) {
	before := warmFDNames(t)
	for _, how := range []string{"Close", "CloseWrite", "Deadline", "Send", "ReactorClose"} {
		t.Run(how, func(t *testing.T) {
			lingerEachEnd(t, func(t *testing.T, v *lingerEnv) { laneStorm(t, v, how) })
		})
	}
	waitSockets(t, before)
}

func laneStorm(t *testing.T, v *lingerEnv, how string) {
	c := v.io
	// ns[w][k] is what writer w's Write k reported; the Sends' come last.
	ns := make([][]int, laneStormWriters+1)
	if _, err := c.Write([]byte{laneStormID}); err != nil { // makes the lane
		t.Fatalf("first Write: %v", err)
	}
	ns[0] = []int{1}
	uv.UvtWaitFor(t, "the write lane open", func() bool { return uv.UvtLane(c) == "open" })

	// The peer reads everything until the end of the stream or a reset.
	var got atomic.Int64
	type readEnd struct {
		b   []byte
		err error
	}
	read := make(chan readEnd, 1)
	go func() {
		v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
		var b []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := v.peer.Read(buf)
			b = append(b, buf[:n]...)
			got.Add(int64(n))
			if err != nil {
				read <- readEnd{b, err}
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for w := range laneStormWriters {
		start := 0
		if w == 0 {
			start = 1 // the write that made the lane was writer 0's first
		}
		goWG(&wg, func() {
			for k := start; ; k++ {
				p := laneStormPayload(w, k)
				n, err := c.Write(p)
				if n < 0 || n > len(p) || err == nil && n != len(p) {
					t.Errorf("writer %d's Write %d = %d, %v of %d bytes", w, k, n, err, len(p))
				}
				ns[w] = append(ns[w], n)
				if err != nil {
					return
				}
			}
		})
	}
	wrote := make(chan struct{})
	go func() {
		wg.Wait()
		close(wrote)
	}()
	uv.UvtWaitFor(t, "bytes flowing to the peer", func() bool { return got.Load() >= 256<<10 })

	reset := false
	switch how {
	case "Close":
		uv.UvtMust(t, c.Close())
	case "CloseWrite":
		if err := c.CloseWrite(); err != nil {
			t.Errorf("CloseWrite = %v", err)
		}
	case "Deadline":
		uv.UvtMust(t, c.SetWriteDeadline(time.Unix(1, 0)))
	case "Send":
		sends := laneStormWriters
		for k := range 100 {
			p := laneStormPayload(sends, k)
			var err error
			uv.UvtMust(t, v.u.Call(func() { err = c.Send(p) }))
			switch {
			case err == nil:
				ns[sends] = append(ns[sends], len(p))
			case errors.Is(err, uv.ErrQueueFull):
				ns[sends] = append(ns[sends], 0)
			default:
				t.Errorf("Send %d from a callback = %v", k, err)
				ns[sends] = append(ns[sends], 0)
			}
		}
		uv.UvtMust(t, c.Close())
	case "ReactorClose":
		v.stop()
		if err := v.u.Close(); err != nil {
			t.Errorf("reactor Close = %v", err)
		}
	}
	uv.UvtRecv(t, wrote, "every Write's return")
	c.Close() // the writers are done: the rest of the variants closes now
	r := uv.UvtRecv(t, read, "the peer's end of the stream")
	switch {
	case errors.Is(r.err, io.EOF):
	case errors.Is(r.err, syscall.ECONNRESET):
		reset = true // the reactor's Close may reset past its linger time: a drop is reported
	default:
		t.Errorf("peer read %d bytes then %v, want the end of the stream", len(r.b), r.err)
	}
	laneStormCheck(t, r.b, ns, !reset)
	if how != "ReactorClose" {
		v.stop()
	}
	uv.UvtShutdown(t, v.u, reset)
	if reset && len(drops(v.u)) == 0 {
		t.Errorf("the peer's stream was reset, with no drop reported")
	}
}

// laneStormWhere says which write's bytes, reported or not, b starts with,
// for a failure's message.
func laneStormWhere(b []byte, ns [][]int, next []int) string {
	b = b[:min(len(b), 32)]
	msg := ""
	for w := range ns {
		msg += fmt.Sprintf("; writer %d: next write %d of %d", w, next[w], len(ns[w]))
		for k := max(next[w]-3, 0); k < len(ns[w])+2; k++ {
			p := laneStormPayload(w, k)
			if w == laneStormWriters && k >= len(ns[w]) {
				break
			}
			for off := 0; off+len(b) <= len(p); off++ {
				if string(p[off:off+len(b)]) == string(b) {
					n := -1
					if k < len(ns[w]) {
						n = ns[w][k]
					}
					msg += fmt.Sprintf(" [matches write %d at byte %d of %d, %d reported]", k, off, len(p), n)
					break
				}
			}
		}
	}
	return msg
}
