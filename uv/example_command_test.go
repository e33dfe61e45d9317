package uv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A Command runs a shell command; in CaptureLines mode the result
// holds the output lines and the last one.
func ExampleNewCommand() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	e, err := uv.NewCommand(r, "echo one; echo two; exit 1", uv.CommandOptions{Mode: uv.CaptureLines})
	if err != nil {
		fmt.Println(err)
		return
	}
	outs, err := event.Await(context.Background(), event.Any(), e)
	if err != nil {
		fmt.Println(err)
		return
	}
	out := outs[0].Result.(*uv.CommandResult)
	fmt.Printf("lines=%q last=%q exit=%d\n", out.Lines, out.Last, out.ExitCode)

	// Output:
	// lines=["one" "two"] last="two" exit=1
}

// The reactor's Close ends the commands still running before it returns:
// SIGTERM to the command's group, SIGKILL after the grace period when it
// ignores SIGTERM, the shell reaped. Shutdown with a context bounds that
// wait and names what still runs; a later Close waits for the rest.
func ExampleCommand_reactorClose() {
	started := func(r *reactor.Reactor, grace time.Duration) *uv.Command {
		rd, wr := io.Pipe()
		e, err := uv.NewCommand(r, "trap '' TERM; echo ready; sleep 30", uv.CommandOptions{Mode: uv.StreamRaw, Out: wr, Grace: grace})
		if err != nil {
			panic(err)
		}
		rd.Read(make([]byte, 6)) // the trap is set
		go io.Copy(io.Discard, rd)
		return e
	}

	r, _ := reactor.New(reactor.Options{})
	e := started(r, 10*time.Millisecond)
	fmt.Println("Close:", r.Close())
	fmt.Println("shell gone:", syscall.Kill(e.Pid(), 0) == syscall.ESRCH)

	r, _ = reactor.New(reactor.Options{})
	e = started(r, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := r.Shutdown(ctx)
	fmt.Println("Shutdown: incomplete:", errors.Is(err, reactor.ErrCloseIncomplete), errors.Is(err, context.DeadlineExceeded))
	syscall.Kill(-e.Pid(), syscall.SIGKILL) // no hour of grace here
	fmt.Println("Close:", r.Close())
	fmt.Println("shell gone:", syscall.Kill(e.Pid(), 0) == syscall.ESRCH)

	// Output:
	// Close: <nil>
	// shell gone: true
	// Shutdown: incomplete: true true
	// Close: <nil>
	// shell gone: true
}
