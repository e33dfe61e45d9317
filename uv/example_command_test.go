package uv_test

import (
	"context"
	"fmt"

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
