package uv_test

import (
	"net"
	"net/http"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/uv"
)

// BenchmarkHTTPConnectionPerRequest: net/http serving one request a
// connection (H1C's server), over uv.Listener on each driver and over
// net.Listen, its comparator. The client is a raw socket, which allocates
// nothing: with -benchmem, allocs/op and B/op are the server's per
// connection (net/http's, the listener's, the connection's and the
// loop's together), the counts H1C's allocations are compared by.
func BenchmarkHTTPConnectionPerRequest(b *testing.B) {
	b.Run("net", func(b *testing.B) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		uv.UvtMust(b, err)
		benchHTTPConnection(b, ln)
	})
	for _, d := range conform.Drivers {
		b.Run(d.String(), func(b *testing.B) {
			if !conform.Available(d) {
				b.Skipf("the %s driver is not in this build (no cgo)", d)
			}
			u := uv.UvtNewReactorOn(b, d)
			stop := uv.UvtServe(b, u)
			defer stop()
			ln, err := uv.Listen(u.Reactor, "tcp4", "127.0.0.1:0")
			uv.UvtMust(b, err)
			benchHTTPConnection(b, ln)
		})
	}
}

// benchHTTPConnection serves net/http on ln, as h1serve does, and makes
// b.N requests each on a connection of its own, which the server closes;
// ln is closed at the end.
func benchHTTPConnection(b *testing.B, ln net.Listener) {
	body := []byte("hello, world\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		<-served
	}()
	ap, _ := ln.Addr().(*net.TCPAddr)
	if ap == nil {
		b.Fatalf("listener's address %v, want a *net.TCPAddr", ln.Addr())
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	req := []byte("GET / HTTP/1.1\r\nHost: h1c\r\nConnection: close\r\n\r\n")
	buf := make([]byte, 4096)
	request := func() {
		fd := rawConnect(b, sa)
		defer unix.Close(fd)
		if _, err := unix.Write(fd, req); err != nil {
			b.Fatalf("write: %v", err)
		}
		got := 0
		for { // until the server's close
			n, err := rawRead(fd, buf)
			if err != nil {
				b.Fatalf("read: %v", err)
			}
			if n == 0 {
				break
			}
			got += n
		}
		if got == 0 {
			b.Fatal("no response")
		}
	}
	for range 100 { // the queues and tables grown, the pools filled
		request()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		request()
	}
	b.StopTimer() // the server's close not counted
}
