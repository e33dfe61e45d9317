package uv_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// TestHTTPServe serves net/http through a Listener and makes real
// requests: several on one kept-alive connection, then each on a new one.
func TestHTTPServe(t *testing.T) {
	ioEachDriver(t, "tcp4", func(t *testing.T, v *ioEnv) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			fmt.Fprintf(w, "%s %s %d", req.Method, req.URL.Path, len(body))
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(v.ln) }()
		url := "http://" + v.ln.Addr().String()
		for _, tc := range []struct {
			name      string
			keepAlive bool
		}{{"keep-alive", true}, {"new connections", false}} {
			t.Run(tc.name, func(t *testing.T) {
				tr := &http.Transport{DisableKeepAlives: !tc.keepAlive}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr}
				reused := 0
				for i := range 5 {
					trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
						if ci.Reused {
							reused++
						}
					}}
					req, err := http.NewRequest("GET", fmt.Sprintf("%s/p%d", url, i), nil)
					uv.UvtMust(t, err)
					resp, err := client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
					if err != nil {
						t.Fatalf("request %d: %v", i, err)
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if want := fmt.Sprintf("GET /p%d 0", i); err != nil || string(body) != want {
						t.Errorf("request %d: %q, %v; want %q", i, body, err, want)
					}
				}
				if want := map[bool]int{true: 4, false: 0}[tc.keepAlive]; reused != want {
					t.Errorf("%d requests on a reused connection, want %d", reused, want)
				}
			})
		}
		uv.UvtMust(t, srv.Close())
		if err := uv.UvtRecv(t, served, "Serve's end"); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v, want ErrServerClosed", err)
		}
		v.finish(t)
	})
}
