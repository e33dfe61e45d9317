package uv_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

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
