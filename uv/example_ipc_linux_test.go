package uv_test

import (
	"bufio"
	"context"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A listener shared with a worker, as Node's cluster shares one: the
// parent passes its listening socket over an IPC pipe, closes its own copy,
// and the worker serves on what it received. In a program the worker is a
// child process started with uv.ProcessOptions{IPC: true} (the parent's
// end is Process.IPC, the child opens uv.OpenIPC(r, uv.IPCFD)); here both
// ends are in this process, each on a reactor of its own, over a socket
// pair.
func ExampleIPC() {
	parentR, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	workerR, err := reactor.New(reactor.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 2)
	go func() { served <- parentR.Serve(ctx) }()
	go func() { served <- workerR.Serve(ctx) }()

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		panic(err)
	}
	parent, err := uv.OpenIPC(parentR, fds[0])
	if err != nil {
		panic(err)
	}
	worker, err := uv.OpenIPC(workerR, fds[1])
	if err != nil {
		panic(err)
	}

	// The parent: pass the listener, then close its own copy.
	ln, err := uv.Listen(parentR, "tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	if err := parent.SendListener(ctx, ln); err != nil {
		panic(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	// The worker: take the listener and answer a connection on it.
	got, err := worker.Receive(ctx)
	if err != nil {
		panic(err)
	}
	go func() {
		c, err := got.Listener.AcceptIO(ctx)
		if err != nil {
			return
		}
		c.Write([]byte("served by the worker\n"))
		c.Close()
	}()

	c, err := net.Dial("tcp4", addr)
	if err != nil {
		panic(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	fmt.Printf("%q %v\n", line, err)

	c.Close()
	got.Listener.Close()
	parent.Close()
	worker.Close()
	stop()
	<-served
	<-served
	parentR.Close()
	workerR.Close()
	// Output: "served by the worker\n" <nil>
}
