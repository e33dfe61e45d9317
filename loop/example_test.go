package loop_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// EventInterface's loop: a one-shot timer, a periodic one that the one-shot
// removes, and Run, which returns when nothing is left.
func ExampleLoop() {
	l, err := loop.New(loop.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	ticks := 0
	tick, _ := l.Repeat(time.Millisecond, func() { ticks++ })
	l.Delay(20*time.Millisecond, func() {
		fmt.Println("removed the ticker:", l.OffRepeat(tick), "after more than 0 ticks:", ticks > 0)
	})
	fmt.Println("timers:", l.TimerCount())
	l.Run(context.Background())
	fmt.Println("timers:", l.TimerCount())
	// Output:
	// timers: 2
	// removed the ticker: true after more than 0 ticks: true
	// timers: 0
}

// The driver comes from the reactor's options: the pure-Go one here, which
// a program built with CGO_ENABLED=0 gets by default.
func ExampleOptions() {
	l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: reactor.DriverGo}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	l.Delay(0, func() { fmt.Println("fired on the", l.Driver(), "driver") })
	l.Run(context.Background())
	// Output:
	// fired on the go driver
}

// OffDelay says whether it removed the timer: a DelayID cannot be given to
// OffRepeat (it does not compile).
func ExampleDelayID() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	id, _ := l.Delay(time.Hour, func() { fmt.Println("an hour later") })
	fmt.Println(id, l.OffDelay(id), l.OffDelay(id))
	// Output:
	// delay#1 true false
}

// A periodic timer removes itself after three calls.
func ExampleRepeatID() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	n := 0
	var id loop.RepeatID
	id, _ = l.Repeat(time.Millisecond, func() {
		n++
		fmt.Println("tick", n)
		if n == 3 {
			fmt.Println(id, "removed:", l.OffRepeat(id))
		}
	})
	l.Run(context.Background())
	// Output:
	// tick 1
	// tick 2
	// tick 3
	// repeat#1 removed: true
}

// An echo over a socket pair: the server stream writes back what it reads;
// the client closes when the answer is in.
func ExampleStream() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	server, _ := l.NewStream(fds[0], loop.StreamOptions{
		CloseFD: true,
		OnData:  func(s *loop.Stream, b []byte) { s.Write(b) },
		OnClose: func(_ *loop.Stream, err error) { fmt.Println("server closed:", err) },
	})
	client, _ := l.NewStream(fds[1], loop.StreamOptions{
		CloseFD: true,
		OnData: func(s *loop.Stream, b []byte) {
			fmt.Printf("client got %q\n", b)
			s.Close()
		},
	})
	client.Write([]byte("hello"))
	l.Run(context.Background()) // until the server hears the end of stream
	fmt.Println("buffered:", server.Buffered())
	// Output:
	// client got "hello"
	// server closed: EOF
	// buffered: 0
}

// ReadSize bounds each read: eight bytes waiting arrive as two blocks of
// four.
func ExampleStreamOptions() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	defer unix.Close(fds[1])
	unix.Write(fds[1], []byte("abcdefgh"))
	unix.Shutdown(fds[1], unix.SHUT_WR)
	l.NewStream(fds[0], loop.StreamOptions{
		ReadSize: 4,
		CloseFD:  true,
		OnData:   func(_ *loop.Stream, b []byte) { fmt.Printf("%q\n", b) },
		OnClose:  func(_ *loop.Stream, err error) { fmt.Println("closed:", err) },
	})
	l.Run(context.Background())
	// Output:
	// "abcd"
	// "efgh"
	// closed: EOF
}

// A signal stops a loop that would otherwise run for ever.
func ExampleLoop_OnSignal() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	l.Repeat(time.Millisecond, func() {})
	l.OnSignal(syscall.SIGUSR1, func(sig syscall.Signal) {
		fmt.Println("got", sig)
		l.DeleteAllTimers()
		l.OffSignal(sig)
	}, loop.SignalOptions{})
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	l.Run(context.Background())
	// Output:
	// got user defined signal 1
}

// A goroutine parks in Suspend until a timer's callback resumes it.
func ExampleLoop_Suspension() {
	l, _ := loop.New(loop.Options{})
	defer l.Close()
	s := l.Suspension()
	co, _ := reactor.Go(context.Background(), l.Reactor(), func(ctx context.Context) (any, error) {
		return s.Suspend(ctx)
	})
	l.Delay(time.Millisecond, func() { s.Resume("resumed by a timer") })
	l.Run(context.Background())
	fmt.Println(co.Outcome())
	// Output:
	// resumed by a timer true <nil>
}
