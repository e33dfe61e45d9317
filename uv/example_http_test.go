package uv_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A net/http server over uv.Listener: each connection is a uv.IO, a
// net.Conn served by http's goroutines while the reactor's loop does the
// I/O.
func Example_httpServe() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	ln, err := uv.Listen(r, "tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintf(w, "hello from %s", req.URL.Path)
	})}
	go srv.Serve(ln)

	for _, path := range []string{"/a", "/b"} {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}

	srv.Close() // closes the listener and the connections
	stop()
	<-served
	r.Close()
	// Output:
	// 200 hello from /a
	// 200 hello from /b
}
