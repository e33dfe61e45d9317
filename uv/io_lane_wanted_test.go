package uv_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// TestLaneWantedEndsTo: each of the loop's ways to take a busy write lane
// back (Close, CloseWrite, a write deadline set in the past, a Send from a
// callback) marks it wanted and waits for the caller's write in flight,
// however it ends: open (whole, or nothing written) or held (in part).
// The caller's write, ending, hands the lane to the loop, which then does
// what it was asked and leaves the lane in the state that follows from
// it: shut for good after a Close (a held lane's rest withdrawn:
// releaseHeld), after a CloseWrite and while the deadline has passed;
// open again after the Send went out whole, and after the deadline is
// removed. The peer reads exactly the bytes written, none twice. The
// verdicts wait on states, never on time.
func TestLaneWantedEndsTo(t *testing.T) {
	type act struct {
		name string
		end  string // how the caller's write ends: "open" or "held"
	}
	acts := []act{{"Close", "open"}, {"Close", "held"}, {"CloseWrite", "open"}, {"Deadline", "open"}, {"Send", "open"}}
	for _, a := range acts {
		t.Run(a.name+"/"+a.end, func(t *testing.T) {
			lingerEachEnd(t, func(t *testing.T, v *lingerEnv) {
				c := v.io
				if _, err := c.Write([]byte{1}); err != nil { // makes the lane
					t.Fatalf("first Write: %v", err)
				}
				uv.UvtWaitFor(t, "the write lane open", func() bool { return uv.UvtLane(c) == "open" })
				if !uv.UvtTakeLane(c) {
					t.Fatalf("write lane %s, want it taken as a caller's write takes it", uv.UvtLane(c))
				}
				sent := []byte("sent from a callback")
				done := make(chan error, 1)
				go func() {
					switch a.name {
					case "Close":
						done <- c.Close()
					case "CloseWrite":
						done <- c.CloseWrite()
					case "Deadline":
						done <- c.SetWriteDeadline(time.Unix(1, 0))
					case "Send":
						var err error
						if x := v.u.Call(func() { err = c.Send(sent) }); x != nil {
							err = x
						}
						done <- err
					}
				}()
				uv.UvtWaitFor(t, "the write lane wanted", func() bool { return uv.UvtLane(c) == "wanted" })
				select {
				case err := <-done:
					uv.UvtEndLaneWrite(c, a.end)
					t.Fatalf("%s = %v with a caller's write in flight on the lane", a.name, err)
				default:
				}
				uv.UvtEndLaneWrite(c, a.end)
				if err := uv.UvtRecv(t, done, a.name+" once the caller's write ended"); err != nil {
					t.Fatalf("%s = %v", a.name, err)
				}
				want := []byte{1}
				switch a.name {
				case "Close":
					if got := uv.UvtLane(c); got != "shut" {
						t.Errorf("write lane after the Close = %s, want shut", got)
					}
					if _, err := c.Write([]byte{2}); !errors.Is(err, uv.ErrClosed) {
						t.Errorf("Write after the Close = %v, want ErrClosed", err)
					}
					if got := uv.UvtLane(c); got != "shut" {
						t.Errorf("write lane after a Write of the closed IO = %s, want shut", got)
					}
				case "CloseWrite":
					if got := uv.UvtLane(c); got != "shut" {
						t.Errorf("write lane after the CloseWrite = %s, want shut", got)
					}
					if n, err := c.Write([]byte{2}); err == nil || n != 0 {
						t.Errorf("Write after the CloseWrite = %d, %v; want 0 and an error", n, err)
					}
				case "Deadline":
					if got := uv.UvtLane(c); got != "shut" {
						t.Errorf("write lane with the deadline passed = %s, want shut", got)
					}
					if n, err := c.Write([]byte{2}); !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
						t.Errorf("Write past the deadline = %d, %v; want 0 and os.ErrDeadlineExceeded", n, err)
					}
					uv.UvtMust(t, c.SetWriteDeadline(time.Time{}))
					if got := uv.UvtLane(c); got != "open" {
						t.Errorf("write lane with the deadline removed = %s, want open", got)
					}
					if n, err := c.Write([]byte{3}); err != nil || n != 1 {
						t.Errorf("Write with the deadline removed = %d, %v", n, err)
					}
					want = append(want, 3)
				case "Send":
					want = append(want, sent...)
					uv.UvtWaitFor(t, "the write lane open after the Send", func() bool { return uv.UvtLane(c) == "open" })
					if n, err := c.Write([]byte{3}); err != nil || n != 1 {
						t.Errorf("Write after the Send = %d, %v", n, err)
					}
					want = append(want, 3)
				}
				if a.name != "Close" {
					uv.UvtMust(t, c.Close())
				}
				v.peer.SetReadDeadline(time.Now().Add(uv.UvtSafety))
				got, err := io.ReadAll(v.peer)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("peer read %q, %v; want %q and the end of the stream", got, err, want)
				}
				v.stop()
				uv.UvtShutdown(t, v.u, false)
			})
		})
	}
}
