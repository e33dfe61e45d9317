package comingfrom_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// big is more than a socket's buffers take at once, so that writes queue.
const big = 8 << 20

// TestNodeIO runs the rows of "From Node" about processes, watches and
// sockets, and the page's two Node code blocks.
func TestNodeIO(t *testing.T) {
	row(t, "child_process.exec", func(t *testing.T, r *reactor.Reactor) {
		cmd, err := uv.NewCommand(r, "echo hi; exit 3", uv.CommandOptions{})
		must(t, err)
		var got *uv.CommandResult
		cmd.OnDone(func(res *uv.CommandResult, err error) { got = res })
		run(t, r)
		if got == nil || !cmp.Equal([]string{"hi"}, got.Lines) || got.ExitCode != 3 {
			t.Fatalf("result %+v, want the line hi and exit code 3", got)
		}
	})
	row(t, "child_process.spawn", func(t *testing.T, r *reactor.Reactor) {
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sh", "-c", "echo a; echo b"}, Stdout: uv.StdioLoop})
		must(t, err)
		out := p.StdoutIO()
		defer out.Close()
		var lines []string
		var end error
		must(t, uv.ReadLines(out, func(line []byte, err error) {
			if err != nil {
				end = err
				return
			}
			lines = append(lines, string(line))
		}))
		run(t, r)
		if !cmp.Equal([]string{"a", "b"}, lines) || end != io.EOF {
			t.Fatalf("lines %q, end %v; want a, b, io.EOF", lines, end)
		}
		// child.stdout.pipe(out): the output is all there at the exit.
		var buf bytes.Buffer
		p, err = uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sh", "-c", "echo piped"}, Stdout: uv.StdioWriter(&buf)})
		must(t, err)
		seen := ""
		p.OnExit(func(int, error) { seen = buf.String() })
		run(t, r)
		if seen != "piped\n" {
			t.Fatalf("at the exit the writer had %q, want piped", seen)
		}
	})
	row(t, "spawn options", func(t *testing.T, r *reactor.Reactor) {
		ctx, cancel := context.WithCancel(bounded(t))
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sleep", "30"}, Context: ctx})
		must(t, err)
		cancel() // {signal}: the abort kills the child
		run(t, r)
		if st, ok := p.ExitStatus(); !ok || st >= 0 {
			t.Fatalf("after the context ended: status %d, %v; want a signal", st, ok)
		}
		// {Group: true}: KillGroup reaches the shell's command too.
		p, err = uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sh", "-c", "sleep 30; true"}, Group: true})
		must(t, err)
		must(t, p.KillGroup(syscall.SIGTERM))
		run(t, r)
		if st, _ := p.ExitStatus(); st != -int(syscall.SIGTERM) {
			t.Fatalf("after KillGroup: status %d, want -15", st)
		}
		// {Detached: true} and Kill.
		p, err = uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sleep", "30"}, Detached: true})
		must(t, err)
		must(t, p.Kill(syscall.SIGKILL))
		run(t, r)
		if st, _ := p.ExitStatus(); st != -int(syscall.SIGKILL) {
			t.Fatalf("after Kill: status %d, want -9", st)
		}
		// Terminate: SIGTERM, then SIGKILL once the grace is over.
		p, err = uv.StartProcess(r, uv.ProcessOptions{
			Args:   []string{"sh", "-c", "trap '' TERM; echo ready; sleep 30"},
			Group:  true,
			Stdout: uv.StdioLoop,
		})
		must(t, err)
		out := p.StdoutIO()
		defer out.Close()
		uv.ReadLines(out, func(line []byte, err error) {
			if string(line) == "ready" { // the trap is set
				must(t, p.Terminate(10*time.Millisecond))
			}
		})
		run(t, r)
		if st, _ := p.ExitStatus(); st != -int(syscall.SIGKILL) {
			t.Fatalf("after Terminate of a child that ignores SIGTERM: status %d, want -9", st)
		}
	})
	row(t, "subprocess.on('exit')", func(t *testing.T, r *reactor.Reactor) {
		p, err := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"sh", "-c", "exit 4"}})
		must(t, err)
		status := -1
		p.OnExit(func(st int, err error) { status = st })
		done := make(chan struct{})
		go func() { <-p.Exited(); close(done) }()
		run(t, r)
		select {
		case <-done:
		case <-time.After(safety):
			t.Fatal("Exited was not closed")
		}
		if status != 4 {
			t.Fatalf("exit status %d, want 4", status)
		}
	})
	row(t, "fs.watch", func(t *testing.T, r *reactor.Reactor) {
		dir := t.TempDir()
		w, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
		must(t, err)
		var got uv.FSEventResult
		w.OnChange(func(ch uv.FSEventResult, err error) {
			if got.Name == "" {
				got = ch
				w.Close()
			}
		})
		must(t, w.Start())
		must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600))
		run(t, r)
		if got.Name != "f" {
			t.Fatalf("change %+v, want one for f", got)
		}
		// Recursive: true, for a tree.
		must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
		tree, err := uv.NewFSEvent(r, dir, uv.FSEventOptions{Recursive: true})
		must(t, err)
		want := filepath.Join("sub", "deep")
		var names []string
		tree.OnChange(func(ch uv.FSEventResult, err error) {
			names = append(names, ch.Name)
			if ch.Name == want {
				tree.Close()
			}
		})
		must(t, tree.Start())
		must(t, os.WriteFile(filepath.Join(dir, want), []byte("x"), 0o600))
		run(t, r)
		if len(names) == 0 || names[len(names)-1] != want {
			t.Fatalf("changes %q, want one for %s", names, want)
		}
	})
	row(t, "net.createServer", func(t *testing.T, r *reactor.Reactor) {
		ln, err := uv.Listen(r, "tcp", "127.0.0.1:0")
		must(t, err)
		ln.OnAccept(func(c *uv.IO, err error) {
			if err != nil {
				return
			}
			c.OnRead(func(p []byte, err error) {
				if err != nil { // the client's end: the program closes
					c.Close()
					ln.Close()
					return
				}
				c.Send(p) // echo
			})
			c.Start()
		})
		must(t, ln.Start())
		addr := ln.Addr().String()
		got := make(chan string, 1)
		go func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				got <- err.Error()
				return
			}
			defer conn.Close()
			conn.Write([]byte("hello"))
			b := make([]byte, 5)
			_, err = io.ReadFull(conn, b)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- string(b)
		}()
		run(t, r) // returns once the listener and the connection are closed
		if s := <-got; s != "hello" {
			t.Fatalf("echo = %q, want hello", s)
		}
	})
	loopRow(t, "socket.write over a raw descriptor", func(t *testing.T, l *loop.Loop) {
		fd, peer := socketPair(t, false)
		drained := 0
		s, err := l.NewStream(fd, loop.StreamOptions{CloseFD: true, OnDrain: func(s *loop.Stream) {
			drained++
			s.Close()
		}})
		must(t, err)
		if n, err := s.Write(make([]byte, big)); n != big || err != nil {
			t.Fatalf("Write = %d, %v; want it all queued", n, err)
		}
		if s.Buffered() == 0 {
			t.Fatal("Buffered = 0 after a write larger than the socket takes")
		}
		read := readAll(peer)
		runLoop(t, l)
		if n := <-read; n != big || drained != 1 {
			t.Fatalf("the peer read %d bytes, OnDrain ran %d times; want %d, once", n, drained, big)
		}
	})
	row(t, "socket.write", func(t *testing.T, r *reactor.Reactor) {
		c, peer := pipe(t, r)
		must(t, c.Send(make([]byte, big)))
		if c.Queued() == 0 {
			t.Fatal("Queued = 0 after a send larger than the socket takes")
		}
		drain, err := c.DrainAsync(0)
		must(t, err)
		read := readAll(peer)
		left := -1
		event.On(drain, func(n int, err error) { left = n; c.Close() })
		run(t, r)
		if n := <-read; n != big || left != 0 {
			t.Fatalf("the peer read %d, the drain said %d; want %d, 0", n, left, big)
		}
	})
	row(t, "socket.end", func(t *testing.T, r *reactor.Reactor) {
		c, peer := pipe(t, r)
		must(t, c.Send(make([]byte, big)))
		end, err := c.CloseWriteAsync()
		must(t, err)
		read := readAll(peer) // ends at the shut write side: io.EOF
		ended := errors.New("pending")
		event.On(end, func(_ struct{}, err error) { ended = err; c.Close() })
		run(t, r)
		if n := <-read; n != big || ended != nil {
			t.Fatalf("the peer read %d before EOF, the end said %v; want %d, nil", n, ended, big)
		}
	})
	loopRow(t, "code block", func(t *testing.T, l *loop.Loop) {
		ticks := 0
		tick, _ := l.Repeat(time.Millisecond, func() { ticks++ })  // setInterval
		l.Delay(20*time.Millisecond, func() { l.OffRepeat(tick) }) // setTimeout + clearInterval
		l.OnSignal(syscall.SIGINT, func(syscall.Signal) {          // process.on('SIGINT')
			l.DeleteAllTimers()
			l.OffSignal(syscall.SIGINT)
		}, loop.SignalOptions{Unref: true})
		runLoop(t, l) // returns when nothing is left, as node does
		if ticks == 0 || l.TimerCount() != 0 {
			t.Fatalf("%d ticks, %d timers left; want some ticks, none left", ticks, l.TimerCount())
		}
		// The same program ended early by SIGINT.
		sent := false
		tick, _ = l.Repeat(time.Millisecond, func() {
			if !sent { // once: a signal left over would reach the next watch
				sent = true
				kill(t, syscall.SIGINT)
			}
		})
		l.Delay(time.Hour, func() { l.OffRepeat(tick) })
		l.OnSignal(syscall.SIGINT, func(syscall.Signal) {
			l.DeleteAllTimers()
			l.OffSignal(syscall.SIGINT)
		}, loop.SignalOptions{Unref: true})
		runLoop(t, l)
		if l.TimerCount() != 0 {
			t.Fatalf("%d timers left after SIGINT, want none", l.TimerCount())
		}
	})
	row(t, "Promise.any block", func(t *testing.T, r *reactor.Reactor) {
		fromCache, fromNetwork := event.NewFuture[string](r), event.NewFuture[string](r)
		elsewhere(t, r, func() { fromCache.Reject(errors.New("miss")); fromNetwork.Resolve("fresh") })
		ctx := bounded(t)
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // the deadline
		defer cancel()
		co, _ := reactor.Go(ctx, r, func(ctx context.Context) (string, error) {
			_, v, err := event.AwaitFirst(ctx, fromCache, fromNetwork) // two Future[string]
			return v, err
		})
		run(t, r)
		if v, _, err := co.Outcome(); v != "fresh" || err != nil {
			t.Fatalf("outcome %q, %v; want fresh", v, err)
		}
		// Neither comes before the deadline. (Something must be under way
		// meanwhile, as the network would be: with nothing that can
		// complete them the wait is a deadlock, and is told so.)
		slow := event.NewFuture[string](r)
		network, _ := r.NewTimer(time.Hour, 0)
		must(t, network.Start())
		ctx, cancel = context.WithTimeout(bounded(t), 5*time.Millisecond)
		defer cancel()
		co, _ = reactor.Go(ctx, r, func(ctx context.Context) (string, error) {
			_, v, err := event.AwaitFirst(ctx, slow, slow)
			return v, err
		})
		event.On(co, func(string, error) { network.Close() })
		run(t, r)
		if _, _, err := co.Outcome(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("outcome past the deadline: %v, want context.DeadlineExceeded", err)
		}
		slow.Resolve("")
	})
}

// pipe returns an IO on r connected to a peer file, closed at the end.
func pipe(t *testing.T, r *reactor.Reactor) (*uv.IO, *os.File) {
	t.Helper()
	fd, peer := socketPair(t, false)
	c, err := uv.OpenPipe(r, fd)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c, peer
}

// readAll reads peer to its end in a goroutine and sends how many bytes came.
func readAll(peer *os.File) <-chan int {
	n := make(chan int, 1)
	go func() {
		k, _ := io.Copy(io.Discard, peer)
		n <- int(k)
	}()
	return n
}
