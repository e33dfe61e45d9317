//go:build stress

package uv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/uv"
)

// closeRace is one race of close, dispose or stop with an event firing:
// setup makes the event firing on a served reactor and returns what ends
// it, run from the loop (inside a callback) or from another goroutine.
type closeRace struct {
	name string
	// fire makes ev busy and returns the end to race with it.
	fire func(t *testing.T, u *uv.UvtReactor, round int) (end func() error)
}

var closeRaces = []closeRace{
	{"timer firing while closed", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		tm, err := u.Reactor.NewTimer(0, time.Millisecond)
		uv.UvtMust(t, err)
		uv.UvtMust(t, tm.Start())
		if round%2 == 0 {
			return tm.Close
		}
		return func() error { tm.Dispose(); return nil }
	}},
	{"trigger sent while stopped and closed", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		tr, err := uv.NewTrigger(u.Reactor)
		uv.UvtMust(t, err)
		uv.UvtMust(t, tr.Start())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for tr.Send() == nil {
			}
		}()
		return func() error {
			tr.Stop()
			err := tr.Close()
			<-done
			return err
		}
	}},
	{"write in flight while its IO closes", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		a, b, err := uv.Pipe(u.Reactor)
		uv.UvtMust(t, err)
		go a.Write(make([]byte, 1<<20)) // more than the socket takes: it stays in flight
		return func() error {
			err := a.Close()
			b.Close()
			return err
		}
	}},
	{"lookup disposed while resolving", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		ai, err := uv.NewAddrInfo(u.Reactor, "localhost", "80", uv.AddrInfoHints{})
		uv.UvtMust(t, err)
		return func() error { ai.Dispose(); return nil }
	}},
	{"process killed while waited on", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		p, err := uv.StartProcess(u.Reactor, uv.ProcessOptions{Args: []string{"/bin/sleep", "10"}})
		uv.UvtMust(t, err)
		waited := make(chan error, 1)
		go func() {
			_, err := event.Await(context.Background(), event.Any(), p)
			waited <- err
		}()
		t.Cleanup(func() { uv.UvtRecv(t, waited, "the wait's end") }) // the exit, or ErrClosed
		return func() error {
			if err := p.Kill(syscall.SIGKILL); err != nil {
				return err
			}
			return p.Close()
		}
	}},
	{"watch closed while events arrive", func(t *testing.T, u *uv.UvtReactor, round int) func() error {
		dir := t.TempDir()
		w, err := uv.NewFSEvent(u.Reactor, dir, uv.FSEventOptions{})
		uv.UvtMust(t, err)
		uv.UvtMust(t, w.Start())
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				os.WriteFile(filepath.Join(dir, fmt.Sprint(i%8)), []byte("x"), 0o600)
			}
		}()
		return func() error {
			err := w.Close()
			close(stop)
			<-done
			return err
		}
	}},
}

// TestStressCloseRacesFiring: for every kind above, on each driver, the
// end (close, dispose, stop, kill) races with the event firing, from the
// loop (queued into a callback of a timer) and from another goroutine;
// rounds repeat it. Run under -race by make stress. Every round ends with
// no handle left once the reactor closes, and nothing reported.
func TestStressCloseRacesFiring(t *testing.T) {
	rounds := stressScale(1000)
	total := 0
	for _, cr := range closeRaces {
		t.Run(cr.name, func(t *testing.T) {
			for _, d := range conform.Drivers {
				if !conform.Available(d) {
					t.Logf("%v driver: not in this build (no cgo)", d)
					continue
				}
				n := rounds
				if cr.name == "process killed while waited on" {
					n = max(1, rounds/10) // a child each
				}
				for i := range n {
					u := uv.UvtNewReactorOn(t, d)
					stop := uv.UvtServe(t, u)
					end := cr.fire(t, u, i)
					var err error
					if i%2 == 0 {
						// From the loop: a callback runs the end.
						done := make(chan struct{})
						uv.UvtMust(t, u.Post(func() { err = end(); close(done) }))
						uv.UvtRecv(t, done, "the end run on the loop")
					} else {
						err = end()
					}
					if err != nil && !errors.Is(err, event.ErrClosed) {
						t.Fatalf("%v round %d: end = %v", d, i, err)
					}
					stop()
					// A lookup that completed before its Dispose is
					// reported as a result never used: that is the rule.
					uv.UvtShutdown(t, u, cr.name == "lookup disposed while resolving")
					for _, rep := range u.Reports() {
						if rep.Msg != "result never used" {
							t.Errorf("%v round %d: report %v", d, i, rep)
						}
					}
					total++
				}
			}
		})
	}
	t.Logf("%d close/fire races run", total)
}

// A UDP socket closed in its own receive callback, while datagrams keep
// arriving, on each driver. It runs in a child process (this test binary
// again), so that a crash is told and the rest of the run goes on: the
// crash it once had fails the test through the child's exit.
func TestStressUDPClosedInOwnCallback(t *testing.T) {
	if os.Getenv("UVEVENT_STRESS_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStressUDPClosedInOwnCallback$", "-test.v")
		cmd.Env = append(os.Environ(), "UVEVENT_STRESS_CHILD=1")
		out, err := cmd.CombinedOutput()
		switch {
		case err != nil:
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("child passed:\n%s", bytes.TrimSpace(out))
		return
	}
	rounds := stressScale(200)
	for _, d := range conform.Drivers {
		if !conform.Available(d) {
			t.Logf("%v driver: not in this build (no cgo)", d)
			continue
		}
		for i := range rounds {
			u := uv.UvtNewReactorOn(t, d)
			stop := uv.UvtServe(t, u)
			s, err := uv.ListenUDP(u.Reactor, "udp4", "127.0.0.1:0")
			uv.UvtMust(t, err)
			closed := make(chan struct{})
			var once sync.Once
			_, err = event.Subscribe(s, func(ev event.Event, _ any, _ error) {
				ev.Close()
				once.Do(func() { close(closed) })
			})
			uv.UvtMust(t, err)
			uv.UvtMust(t, s.Start())
			c, err := net.Dial("udp4", s.LocalAddr().String())
			uv.UvtMust(t, err)
			for range 8 {
				c.Write([]byte("datagram"))
			}
			uv.UvtRecv(t, closed, "the receive callback")
			c.Close()
			stop()
			uv.UvtShutdown(t, u, false)
			_ = i
		}
	}
}
