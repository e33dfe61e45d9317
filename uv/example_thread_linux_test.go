package uv_test

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A Thread runs a function on an OS thread of its own.
func ExampleNewThread() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	th, err := uv.NewThread(r, func(context.Context) (int, error) {
		return unix.Gettid(), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tid, err := th.Await(context.Background()) // an int
	fmt.Println("ran on its own thread:", tid == th.ThreadID(), err)

	// Output:
	// ran on its own thread: true <nil>
}
