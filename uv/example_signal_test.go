package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// A Signal event hears a signal on the loop goroutine; signals come
// through os/signal, never through a libuv handler.
func ExampleNewSignal() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	sig, err := uv.NewSignal(r, syscall.SIGUSR1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sig.Info())
	event.Subscribe(sig, func(ev event.Event, res any, err error) {
		if errors.Is(err, event.ErrClosed) { // the reactor's Close closes it
			fmt.Println("closed with the reactor")
			return
		}
		fmt.Println("heard", res, "on the loop:", r.Owner().Owned())
		ev.Stop() // the last Stop gives the signal back; Run can end
	})
	sig.Start()
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	if err := r.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	_, err = uv.NewSignal(r, syscall.SIGKILL)
	fmt.Println(err)
	r.Close()

	// Output:
	// Signal(signum=10)
	// heard user defined signal 1 on the loop: true
	// uv: NewSignal(9): cannot be caught: invalid argument
	// closed with the reactor
}

// One Signal for several signals, as a shutdown hears SIGINT and SIGTERM:
// one callback, told which one came.
func ExampleNewSignal_many() {
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	stop, err := uv.NewSignal(r, syscall.SIGINT, syscall.SIGTERM)
	if err != nil {
		fmt.Println(err)
		return
	}
	stop.OnSignal(func(sig syscall.Signal, err error) {
		fmt.Println("shutting down on", sig)
		stop.Close()
	})
	stop.Start()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	r.Run(context.Background())

	// Output:
	// shutting down on terminated
}
