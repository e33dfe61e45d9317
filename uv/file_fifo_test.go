package uv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// TestFileFIFOReadWrite: a FIFO opened as a File reads and writes with
// Read and Write (at the descriptor's position, as read(2) and write(2)),
// where positional calls fail with ESPIPE.
func TestFileFIFOReadWrite(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		u := uv.UvtNewReactorOn(t, d)
		stop := uv.UvtServe(t, u)
		defer stop()
		fifo := filepath.Join(t.TempDir(), "fifo")
		uv.UvtMust(t, unix.Mkfifo(fifo, 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), uv.UvtSafety)
		defer cancel()
		f, err := uv.OpenFile(ctx, u.Reactor, fifo, os.O_RDWR, 0) // O_RDWR: no wait for a peer
		uv.UvtMust(t, err)
		defer f.Close()
		if n, err := f.Write([]byte("hello")); n != 5 || err != nil {
			t.Errorf("Write to a FIFO = %d, %v; want 5, nil", n, err)
		}
		buf := make([]byte, 16)
		if n, err := f.Read(buf); string(buf[:n]) != "hello" || err != nil {
			t.Errorf("Read from a FIFO = %q, %v; want \"hello\", nil", buf[:n], err)
		}
	})
}

func init() { uv.UvtRegisterChild("fifo-sigpipe", fifoSigpipe) }

// fifoSigpipe writes with a File to a FIFO whose reader has gone and
// prints the error: the process must live to print it.
func fifoSigpipe() int {
	d, _ := strconv.Atoi(os.Getenv("UVT_DRIVER"))
	// A child process has no testing.T for UvtNewReactorOn; it reports by
	// its output and exit status.
	r, err := reactor.New(reactor.Options{Driver: reactor.Driver(d)})
	if err != nil {
		fmt.Println("reactor.New:", err)
		return 1
	}
	ctx, stop := context.WithCancel(context.Background())
	go r.Serve(ctx)
	defer stop()
	dir, err := os.MkdirTemp("", "uvfifo")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	rd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	f, err := uv.OpenFile(ctx, r, fifo, os.O_WRONLY, 0)
	if err != nil {
		fmt.Println("OpenFile:", err)
		return 1
	}
	unix.Close(rd)
	q, err := f.WriteAsync([]byte("nobody reads this"), -1)
	if err != nil {
		fmt.Println("WriteAsync:", err)
		return 1
	}
	out, err := event.Await(ctx, event.Any(), q)
	if err == nil {
		err = out[0].Err
	}
	fmt.Println(errors.Is(err, syscall.EPIPE))
	return 0
}

// TestFileFIFOBrokenPipe: a File's write to a FIFO whose reader has gone
// fails with EPIPE; SIGPIPE does not end the process (on libuv the write
// runs on a pool thread, which blocks it). In a child process, so that a
// death fails the test rather than ending the test binary.
func TestFileFIFOBrokenPipe(t *testing.T) {
	conform.EachDriver(t, func(t *testing.T, d reactor.Driver) {
		out := uv.UvtRunChild(t, "fifo-sigpipe", fmt.Sprintf("UVT_DRIVER=%d", int(d)))
		if out != "true\n" {
			t.Errorf("the write to a FIFO with no reader: child printed %q, want EPIPE (true)", out)
		}
	})
}
