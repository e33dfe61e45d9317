package uv_test

import (
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// TestIOClosedByReadAsyncCallback: a read brings more bytes than the
// parked ReadAsync takes, and that request's callback closes the IO. The
// rest of the read is nobody's: the closed IO keeps no buffer of it.
func TestIOClosedByReadAsyncCallback(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		client, server := v.pair(t)
		f, err := server.ReadAsync(1)
		uv.UvtMust(t, err)
		got := make(chan string, 1)
		event.Subscribe(f, func(_ event.Event, res any, err error) {
			p, _ := res.([]byte)
			server.Close()
			got <- string(p)
		})
		_, err = client.Write([]byte("abcdef"))
		uv.UvtMust(t, err)
		if s := uv.UvtRecv(t, got, "the read"); s != "a" {
			t.Errorf("the read = %q, want %q", s, "a")
		}
		if n, b := uv.UvtKept(server); n != 0 || b != 0 {
			t.Errorf("the closed IO keeps %d buffers (%d bytes), want none", n, b)
		}
		v.finish(t, client)
	})
}
