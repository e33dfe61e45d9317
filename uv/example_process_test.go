package uv_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// StartProcess starts a child; its end is an event carrying the exit code.
func ExampleStartProcess() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	p, err := uv.StartProcess(r, uv.ProcessOptions{
		Args:   []string{"sh", "-c", "echo hello from $0; exit 7", "child"},
		Stdout: uv.StdioPipe,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := io.ReadAll(p.Stdout())
	p.Stdout().Close()
	fmt.Print(string(out))

	// Wait for the end (a waiter that comes after it gets the stored
	// result at once). Callbacks added with AddCallback run on the loop.
	outs, err := event.Await(context.Background(), event.Any(), p)
	fmt.Println("exit code:", outs[0].Result, err, p.Info() == fmt.Sprintf("Process(pid=%d, exit=7)", p.Pid()))

	// Output:
	// hello from child
	// exit code: 7 <nil> true
}

// A child's output read on the loop: StdioLoop makes its standard output
// an IO of the reactor, and ReadLines gives it line by line; the exit is
// reported after the output's end; Run returns once the child has ended
// and its output is closed.
func ExampleStdioLoop() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	p, err := uv.StartProcess(r, uv.ProcessOptions{
		Args:   []string{"sh", "-c", "echo one; echo two; printf three"},
		Stdout: uv.StdioLoop,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := p.StdoutIO()
	uv.ReadLines(out, func(line []byte, err error) {
		if err != nil { // io.EOF: the child closed its output
			fmt.Println("end:", err == io.EOF)
			out.Close()
			return
		}
		fmt.Printf("line %q\n", line)
	})
	event.Subscribe(p, func(_ event.Event, res any, err error) { fmt.Println("exit code:", res, err) })
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}

	// Output:
	// line "one"
	// line "two"
	// line "three"
	// end: true
	// exit code: 0 <nil>
}

// Terminate ends a child — SIGTERM, then SIGKILL after the grace period
// if it is still there — and the Process completes once the child has been
// reaped: the moment a replacement may start (a restart on the same port).
// Group puts the child in a process group of its own, so that what a shell
// started ends with it.
func ExampleProcess_Terminate() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	start := func(gen int) *uv.Process {
		p, err := uv.StartProcess(r, uv.ProcessOptions{
			Args:  []string{"sh", "-c", "trap '' TERM; sleep 30 & wait"}, // ignores SIGTERM
			Group: true,
		})
		if err != nil {
			fmt.Println(err)
			return nil
		}
		fmt.Println("started generation", gen)
		return p
	}
	old := start(1)
	event.Subscribe(old, func(_ event.Event, res any, err error) {
		// res is -15 or -9: SIGTERM ends the shell if it comes before the
		// trap is set, SIGKILL after the grace period otherwise.
		fmt.Println("generation 1 gone:", res.(int) < 0, err)
		if next := start(2); next != nil {
			next.KillGroup(syscall.SIGKILL)
		}
	})
	old.Terminate(10 * time.Millisecond)
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}

	// Output:
	// started generation 1
	// generation 1 gone: true <nil>
	// started generation 2
}

// A child's output sent to an io.Writer, as os/exec's cmd.Stdout = w: by
// the time the exit is delivered on the loop, all of it has been written.
func ExampleStdioWriter() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	var out strings.Builder
	p, err := uv.StartProcess(r, uv.ProcessOptions{
		Args:   []string{"sh", "-c", "echo one; echo two >&2"},
		Stdout: uv.StdioWriter(&out),
		Stderr: uv.StdioWriter(&out), // the same writer: one pipe, in order
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	event.On(p, func(code int, err error) { fmt.Printf("%sexit %d %v\n", out.String(), code, err) })
	r.Run(context.Background())

	// Output:
	// one
	// two
	// exit 0 <nil>
}
