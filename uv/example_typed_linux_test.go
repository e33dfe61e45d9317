package uv_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// newExampleReactor makes a reactor for an example, or says why not.
func newExampleReactor() *reactor.Reactor {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return nil
	}
	return r
}

// OnAccept hands each connection over as a *uv.IO: no type assertion.
func ExampleListener_OnAccept() {
	r := newExampleReactor()
	defer r.Close()
	l, _ := uv.Listen(r, "tcp", "127.0.0.1:0")
	l.OnAccept(func(c *uv.IO, err error) {
		fmt.Println("accepted:", c != nil, err)
		c.Close()
		l.Close() // one is enough; fn does not hear this Close
	})
	l.Start()
	go func() {
		if c, err := uv.Dial(context.Background(), r, "tcp", l.Addr().String()); err == nil {
			c.Close()
		}
	}()
	r.Run(context.Background())
	// Output: accepted: true <nil>
}

// OnRead hands over the bytes read as a []byte, valid only during the
// call, and then how reading ended.
func ExampleIO_OnRead() {
	r := newExampleReactor()
	defer r.Close()
	a, b, _ := uv.Pipe(r)
	b.OnRead(func(p []byte, err error) {
		if err != nil {
			fmt.Println("end:", err)
			b.Close()
			return
		}
		fmt.Printf("read %q\n", p) // copy p to keep it
	})
	b.Start()
	a.Send([]byte("hello"))
	a.Close()
	r.Run(context.Background())
	// Output:
	// read "hello"
	// end: EOF
}

// OnDatagram hands over each datagram, its Data valid only during the call.
func ExampleUDP_OnDatagram() {
	r := newExampleReactor()
	defer r.Close()
	srv, _ := uv.ListenUDP(r, "udp", "127.0.0.1:0")
	cli, _ := uv.ListenUDP(r, "udp", "127.0.0.1:0")
	srv.OnDatagram(func(d uv.Datagram, err error) {
		fmt.Printf("%q from the client: %v\n", d.Data, d.Addr.Port == cli.LocalAddr().(*net.UDPAddr).Port)
		srv.Close()
		cli.Close()
	})
	srv.Start()
	cli.WriteTo([]byte("ping"), srv.LocalAddr())
	r.Run(context.Background())
	// Output: "ping" from the client: true
}

// OnChange hands over each change as an FSEventResult.
func ExampleFSEvent_OnChange() {
	r := newExampleReactor()
	defer r.Close()
	dir, _ := os.MkdirTemp("", "onchange")
	defer os.RemoveAll(dir)
	w, _ := uv.NewFSEvent(r, dir, uv.FSEventOptions{})
	w.OnChange(func(ch uv.FSEventResult, err error) {
		fmt.Println("changed:", ch.Name, err)
		w.Close()
	})
	w.Start()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("1"), 0o600)
	r.Run(context.Background())
	// Output: changed: notes.txt <nil>
}

// OnReady hands over the events that fired as PollEvents.
func ExamplePoll_OnReady() {
	r := newExampleReactor()
	defer r.Close()
	var fds [2]int
	unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC)
	defer unix.Close(fds[1])
	p, _ := uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
	p.OnReady(func(ev uv.PollEvents, err error) {
		fmt.Println(ev, err)
		p.Close()
	})
	p.Start()
	unix.Write(fds[1], []byte("!"))
	r.Run(context.Background())
	// Output: r <nil>
}

// OnReady on a proxy hands over the events of the proxy's mask.
func ExamplePollProxy_OnReady() {
	r := newExampleReactor()
	defer r.Close()
	var fds [2]int
	unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC)
	defer unix.Close(fds[1])
	p, _ := uv.NewPoll(r, fds[0], uv.Readable, uv.PollOptions{CloseFD: true})
	reader, _ := uv.NewPollProxy(p, uv.Readable)
	reader.OnReady(func(ev uv.PollEvents, err error) {
		fmt.Println("reader:", ev, err)
		p.Close() // closes its proxies too
	})
	reader.Start()
	unix.Write(fds[1], []byte("!"))
	r.Run(context.Background())
	// Output: reader: r <nil>
}

// OnSignal hands over the signal as a syscall.Signal.
func ExampleSignal_OnSignal() {
	r := newExampleReactor()
	defer r.Close()
	s, _ := uv.NewSignal(r, syscall.SIGUSR1)
	s.OnSignal(func(sig syscall.Signal, err error) {
		fmt.Println("heard", sig, err)
		s.Close()
	})
	s.Start()
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	r.Run(context.Background())
	// Output: heard user defined signal 1 <nil>
}

// OnExit hands over the exit status as an int.
func ExampleProcess_OnExit() {
	r := newExampleReactor()
	defer r.Close()
	p, _ := uv.StartProcess(r, uv.ProcessOptions{Args: []string{"/bin/sh", "-c", "exit 3"}})
	p.OnExit(func(status int, err error) { fmt.Println("exit status", status, err) })
	r.Run(context.Background())
	// Output: exit status 3 <nil>
}

// OnDone hands over the command's *CommandResult.
func ExampleCommand_OnDone() {
	r := newExampleReactor()
	defer r.Close()
	e, _ := uv.NewCommand(r, "echo hello", uv.CommandOptions{Mode: uv.CaptureAll})
	e.OnDone(func(res *uv.CommandResult, err error) { fmt.Printf("%q %v\n", res.Output, err) })
	r.Run(context.Background())
	// Output: "hello\n" <nil>
}

// OnDone hands over the task's result as its T.
func ExampleTask_OnDone() {
	r := newExampleReactor()
	defer r.Close()
	t, _ := uv.QueueTask(r, func(context.Context) (int, error) { return 6 * 7, nil })
	t.OnDone(func(v int, err error) { fmt.Println(v+1, err) })
	r.Run(context.Background())
	// Output: 43 <nil>
}

// OnDone hands over the thread's result as its T.
func ExampleThread_OnDone() {
	r := newExampleReactor()
	defer r.Close()
	th, _ := uv.NewThread(r, func(context.Context) (string, error) { return "done on a thread", nil })
	th.OnDone(func(v string, err error) { fmt.Println(v, err) })
	r.Run(context.Background())
	// Output: done on a thread <nil>
}

// A []*uv.Task[int] goes into the typed waits as it is; AwaitAllSettled
// gives every value and error by position.
func ExampleQueueTask_awaitAllSettled() {
	r := newExampleReactor()
	defer r.Close()
	go r.Serve(context.Background())
	var tasks []*uv.Task[int]
	for i := range 3 {
		t, _ := uv.QueueTask(r, func(context.Context) (int, error) {
			if i == 1 {
				return 0, fmt.Errorf("task %d failed", i)
			}
			return i * i, nil
		})
		tasks = append(tasks, t)
	}
	vs, errs, err := event.AwaitAllSettled(context.Background(), tasks...)
	fmt.Println(vs, errs, err)
	// Output: [0 0 4] [<nil> task 1 failed <nil>] <nil>
}

// OnFire runs fn each time the timer fires.
func ExampleTimer_OnFire() {
	r := newExampleReactor()
	defer r.Close()
	t, _ := r.NewTimer(time.Millisecond, time.Millisecond)
	n := 0
	t.OnFire(func(err error) {
		if n++; n == 3 {
			fmt.Println("fired three times", err)
			t.Close()
		}
	})
	t.Start()
	r.Run(context.Background())
	// Output: fired three times <nil>
}
