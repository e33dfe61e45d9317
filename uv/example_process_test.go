package uv_test

import (
	"context"
	"fmt"
	"io"

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
