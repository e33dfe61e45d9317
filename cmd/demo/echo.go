package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// tourLoop: package loop's interface over the same reactor. An echo server on
// 127.0.0.1 accepts in an OnReadable callback and echoes through Streams; a
// Repeat reports its figures; three clients (plain net.Conn goroutines)
// talk to it; when they are done the demo sends itself SIGTERM, and the
// OnSignal callback shuts the server down gracefully, after which Run
// returns. A Delay bounds the whole stop.
func tourLoop(ctx context.Context, r *reactor.Reactor) error {
	l, err := loop.New(loop.Options{Reactor: r})
	if err != nil {
		return err
	}
	defer l.Close()
	lfd, addr, err := listen()
	if err != nil {
		return err
	}
	say("echo server listening on %s (OnReadable on the listening socket)", addr)

	conns := map[*loop.Stream]bool{}
	accepted, echoed := 0, 0
	if err := l.OnReadable(lfd, func(fd int) {
		for {
			nfd, _, err := unix.Accept(fd)
			if err != nil {
				return // EAGAIN: no one else is waiting
			}
			unix.CloseOnExec(nfd)
			unix.SetNonblock(nfd, true)
			s, err := l.NewStream(nfd, loop.StreamOptions{
				CloseFD: true,
				OnData: func(s *loop.Stream, b []byte) {
					echoed += len(b)
					s.Write(b)
				},
				OnClose: func(s *loop.Stream, _ error) { delete(conns, s) },
			})
			if err != nil {
				unix.Close(nfd)
				continue
			}
			accepted++
			conns[s] = true
		}
	}); err != nil {
		unix.Close(lfd)
		return err
	}

	ticker, _ := l.Repeat(15*time.Millisecond, func() {
		say("Repeat: %d connections open, %d accepted, %d bytes echoed", len(conns), accepted, echoed)
	})
	safety, _ := l.Delay(5*time.Second, func() {
		say("Delay: the safety timer ran out; stopping")
		l.Stop()
	})
	say("timers pending: %d (the figures every 15ms, a 5s safety stop)", l.TimerCount())

	err = l.OnSignal(syscall.SIGTERM, func(sig syscall.Signal) {
		say("OnSignal: %v: closing the listener and %d connections", sig, len(conns))
		l.OffReadable(lfd)
		unix.Close(lfd)
		for s := range conns {
			s.Close()
		}
		say("OffRepeat: %v, OffDelay: %v, OffSignal: %v", l.OffRepeat(ticker), l.OffDelay(safety), l.OffSignal(sig))
	}, loop.SignalOptions{})
	if err != nil {
		return err
	}

	results := make([]string, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = client(addr, i)
		}()
	}
	go func() {
		wg.Wait()
		syscall.Kill(os.Getpid(), syscall.SIGTERM) // the graceful stop
	}()
	if err := l.Run(ctx); err != nil {
		return err
	}
	for _, res := range results {
		say("%s", res)
	}
	say("Run returned: %d timers left, %d bytes echoed in all", l.TimerCount(), echoed)
	return nil
}

// listen opens a non-blocking TCP socket listening on 127.0.0.1 (a port
// the system picks).
func listen() (int, string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, "", err
	}
	unix.CloseOnExec(fd)
	if err = unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	if err == nil {
		err = unix.Listen(fd, 64)
	}
	var sa unix.Sockaddr
	if err == nil {
		sa, err = unix.Getsockname(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	return fd, fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port), nil
}

// client sends three messages 10ms apart and checks each echo.
func client(addr string, n int) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return fmt.Sprintf("client %d: %v", n, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	for i := range 3 {
		msg := fmt.Sprintf("client %d, message %d", n, i)
		if _, err := io.WriteString(c, msg); err != nil {
			return fmt.Sprintf("client %d: %v", n, err)
		}
		back := make([]byte, len(msg))
		if _, err := io.ReadFull(c, back); err != nil {
			return fmt.Sprintf("client %d: %v", n, err)
		}
		if string(back) != msg {
			return fmt.Sprintf("client %d: sent %q, got %q", n, msg, back)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Sprintf("client %d: 3 messages echoed back intact", n)
}
