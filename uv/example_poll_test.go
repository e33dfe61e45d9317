package uv_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A poll tells when a descriptor is ready; the callback reads what is
// there. With CloseFD the poll owns the descriptor and closes it with
// itself.
func ExampleNewPoll() {
	r, p, fds, done, err := examplePoll()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	event.Subscribe(p, func(ev event.Event, res any, err error) {
		if err != nil {
			fmt.Println("closed:", err)
			return
		}
		buf := make([]byte, 16)
		n, _ := unix.Read(fds[0], buf)
		fmt.Printf("%v: read %q\n", res, buf[:n])
		ev.Stop()
	})
	p.Start()
	unix.Write(fds[1], []byte("hello"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.Run(ctx)                                                           // until the poll stopped itself
	fmt.Println(strings.Replace(p.Info(), strconv.Itoa(p.FD()), "N", 1)) // fd=N: numbers vary
	p.Close()
	_, err = unix.FcntlInt(uintptr(fds[0]), unix.F_GETFD, 0)
	fmt.Println("descriptor after Close:", err)

	// Output:
	// r: read "hello"
	// Poll(fd=N, events=r)
	// closed: event: closed
	// descriptor after Close: bad file descriptor
}

// Two proxies share one poll: the reader hears only readability, the
// writer only writability, and the poll polls for the union of the started
// proxies' events.
func ExampleNewPollProxy() {
	r, p, fds, done, err := examplePoll()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	reader, _ := uv.NewPollProxy(p, uv.Readable)
	writer, _ := uv.NewPollProxy(p, uv.Writable)
	event.Subscribe(reader, func(ev event.Event, res any, err error) {
		if err == nil {
			fmt.Println("reader:", res)
			ev.Stop()
		}
	})
	event.Subscribe(writer, func(ev event.Event, res any, err error) {
		if err == nil {
			fmt.Println("writer:", res)
			ev.Stop()
		}
	})
	writer.Start()
	fmt.Println(strings.Replace(p.Info(), strconv.Itoa(p.FD()), "N", 1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.Run(ctx)

	reader.Start()
	unix.Write(fds[1], []byte("x"))
	r.Run(ctx)

	// Output:
	// Poll(fd=N, events=w, proxies=2)
	// writer: w
	// reader: r
}

// examplePoll makes the examples' reactor, a connected socket pair and a
// poll for reading that owns the pair's first descriptor; done closes them.
func examplePoll() (r *reactor.Reactor, p *uv.Poll, fds [2]int, done func(), err error) {
	if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0); err != nil {
		return
	}
	if r, err = reactor.New(reactor.Options{}); err != nil {
		return
	}
	p, err = uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
	return r, p, fds, func() { p.Close(); unix.Close(fds[1]); r.Close() }, err
}
