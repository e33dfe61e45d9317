package uv_test

import (
	"context"
	"net"
	"regexp"
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The I/O kinds' rows of the conformance table.

func TestConformListener(t *testing.T) {
	var mu sync.Mutex
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	conform.Run(t, conform.Kind{
		Name: "listener",
		New: func(r *reactor.Reactor) (event.Event, error) {
			return uv.Listen(r, "tcp4", "127.0.0.1:0")
		},
		Fire: func(ev event.Event) error {
			c, err := net.Dial("tcp4", ev.(*uv.Listener).Addr().String())
			mu.Lock()
			clients = append(clients, c)
			mu.Unlock()
			return err
		},
		Info: regexp.MustCompile(`^Listener\(tcp4 127\.0\.0\.1:\d+, accepted=\d+, failed=\d+\)$`),
	})
}

// TestConformIO runs a TCP connection through the table: its peer is a net
// connection, whose write makes the IO notify a read.
func TestConformIO(t *testing.T) {
	nl, err := net.Listen("tcp4", "127.0.0.1:0")
	uv.UvtMust(t, err)
	defer nl.Close()
	var mu sync.Mutex
	peers := map[string]net.Conn{}
	arrived := sync.NewCond(&mu)
	go func() {
		for {
			c, err := nl.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			peers[c.RemoteAddr().String()] = c
			arrived.Broadcast()
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range peers {
			c.Close()
		}
	}()
	conform.Run(t, conform.Kind{
		Name: "io",
		New: func(r *reactor.Reactor) (event.Event, error) {
			f, err := uv.DialAsync(r, "tcp4", nl.Addr().String())
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
			defer cancel()
			for !f.Done() {
				if err := r.RunOnce(ctx); err != nil {
					return nil, err
				}
			}
			c, _, err := f.Outcome()
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Fire: func(ev event.Event) error {
			local := ev.(*uv.IO).LocalAddr().String()
			mu.Lock()
			defer mu.Unlock()
			for peers[local] == nil {
				arrived.Wait()
			}
			_, err := peers[local].Write([]byte("x"))
			return err
		},
		Info: regexp.MustCompile(`^IO\(tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+, in=\d+, out=\d+\)$`),
	})
}

// TestConformPipe runs one end of a socket pair through the table; the
// other end's writes make it notify. The other end lives as long as the
// first: it is closed when the first is collected.
func TestConformPipe(t *testing.T) {
	var mu sync.Mutex
	others := map[weak.Pointer[uv.IO]]*uv.IO{}
	conform.Run(t, conform.Kind{
		Name: "io",
		New: func(r *reactor.Reactor) (event.Event, error) {
			a, b, err := uv.Pipe(r)
			if err != nil {
				return nil, err
			}
			key := weak.Make(a)
			mu.Lock()
			others[key] = b
			mu.Unlock()
			runtime.AddCleanup(a, func(key weak.Pointer[uv.IO]) {
				mu.Lock()
				b := others[key]
				delete(others, key)
				mu.Unlock()
				go b.Close() // a cleanup must not wait for a loop
			}, key)
			return a, nil
		},
		Fire: func(ev event.Event) error {
			mu.Lock()
			b := others[weak.Make(ev.(*uv.IO))]
			mu.Unlock()
			return b.Send([]byte("x"))
		},
		Info: regexp.MustCompile(`^IO\(unix \S*->\S*, in=\d+, out=\d+\)$`),
	})
}
