package uv_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A uv.Dialer in the place of a net.Dialer: an HTTP client whose
// connections are made on a reactor, each dial bounded by Timeout, its
// host name resolved within the dial's context and every address of it
// tried, as net.Dialer does.
func ExampleDialer() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello over uv")
	})}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)

	d := &uv.Dialer{Reactor: r, Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	resp, err := client.Get("http://localhost:" + port + "/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, string(body))

	client.CloseIdleConnections()
	srv.Close()
	stop()
	<-served
	r.Close()
	// Output:
	// 200 OK hello over uv
}
