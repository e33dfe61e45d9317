package uv_test

import (
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/uv"
)

// TestIOStartedWithoutCallbackKeeps: an IO started with no callback to
// receive its reads loses no byte: what comes goes to a blocking Read, as
// on a stopped IO, and, once a callback subscribes, to the callback, in
// order, on either driver. (Before, the loop read it and notified nobody.)
func TestIOStartedWithoutCallbackKeeps(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		c, s := v.pair(t)
		uv.UvtMust(t, s.Start()) // no callback
		uv.UvtMust(t, s.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
		write := func(p string) {
			t.Helper()
			if _, err := c.Write([]byte(p)); err != nil {
				t.Fatalf("Write(%q): %v", p, err)
			}
			for range 3 { // turns in which a started IO's loop would read
				v.u.Call(func() {})
			}
		}
		write("hello")
		b := make([]byte, 5)
		if _, err := io.ReadFull(s, b); err != nil || string(b) != "hello" {
			t.Fatalf("Read = %q, %v; want the bytes no callback took, \"hello\"", b, err)
		}
		write("abc")
		got := make(chan string, 8)
		_, err := s.OnRead(func(p []byte, err error) {
			if err == nil {
				got <- string(p)
			}
		})
		uv.UvtMust(t, err)
		write("def")
		var all string
		for len(all) < 6 {
			all += uv.UvtRecv(t, got, "a read for the callback")
		}
		if diff := cmp.Diff("abcdef", all); diff != "" {
			t.Errorf("the callback's bytes (-want +got):\n%s", diff)
		}
		v.finish(t, c, s)
	})
}
