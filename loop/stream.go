package loop

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
)

// DefaultReadSize is the block a Stream reads at once when
// StreamOptions.ReadSize is 0.
const DefaultReadSize = 64 << 10

// MaxReadSize is the largest StreamOptions.ReadSize: the block is
// allocated when the stream is made, so a larger one is refused rather
// than risk ending the process out of memory.
const MaxReadSize = 16 << 20

// StreamOptions say what a Stream does with what it reads and when it
// tells its user. Every callback runs on the loop goroutine.
type StreamOptions struct {
	// ReadSize is the most a single read takes (DefaultReadSize if 0): a
	// readiness is answered with one read of up to ReadSize bytes. At most
	// MaxReadSize.
	ReadSize int
	// OnData receives each block read. The slice is the stream's buffer:
	// valid during the call only (copy what you keep). Without OnData the
	// stream does not read.
	OnData func(s *Stream, b []byte)
	// OnDrain is called when the write buffer has emptied after a write
	// that could not go out at once.
	OnDrain func(s *Stream)
	// OnClose is called once when the stream closes: err is nil for a
	// Close (the stream's, the Loop's or the reactor's), io.EOF at the
	// peer's end of stream, or the error of a read or write. From a
	// goroutine other than the loop's, the call is queued on the loop;
	// after the reactor's Close it is made in the closing goroutine. A
	// stream dropped without Close is not told.
	OnClose func(s *Stream, err error)
	// CloseFD makes the stream close its descriptor when it closes, or
	// when it is dropped without Close and collected.
	CloseFD bool
}

// A Stream is EventInterface's buffered connection (TcpConnection) over the Loop's interface: it
// reads in large blocks when the descriptor is readable (OnReadable), and
// queues writes that go out when it is writable (OnWritable). A Write
// writes what the socket takes at once and keeps the rest in the stream's
// buffer; the buffer goes out as the socket drains, and Buffered says how
// much is waiting, so a producer sees the backpressure and can slow down
// (wait for OnDrain). Write is safe from any goroutine.
//
// The Loop's Close (and the reactor's) closes every stream of the loop. A
// stream that reads (OnData), or has writes waiting, is held by the loop
// as a started event is: dropping it does not end it. One that does
// neither and is dropped without Close is collected, and then closes the
// descriptor it owns (CloseFD).
type Stream struct {
	l       *Loop
	fd      int
	opts    StreamOptions
	buf     []byte // the read block (loop-owned)
	id      uint64 // the key of the loop's weak record of the stream
	cleanup runtime.Cleanup

	mu       sync.Mutex
	out      []byte // written by Write, not yet taken by the socket
	watching bool   // OnWritable is registered (or about to be)
	closed   bool
}

// NewStream makes a stream over fd (a socket, pipe or tty) and, if
// opts.OnData is set, starts reading. The descriptor is made non-blocking.
// It is refused like OnReadable refuses (syscall.EBADF for a descriptor
// that is not open); a ReadSize above MaxReadSize with syscall.EINVAL.
func (l *Loop) NewStream(fd int, opts StreamOptions) (*Stream, error) {
	if err := l.usable("NewStream"); err != nil {
		return nil, err
	}
	if opts.ReadSize > MaxReadSize {
		return nil, fmt.Errorf("loop: NewStream(fd=%d): ReadSize %d above MaxReadSize: %w", fd, opts.ReadSize, syscall.EINVAL)
	}
	if opts.ReadSize <= 0 {
		opts.ReadSize = DefaultReadSize
	}
	s := &Stream{l: l, fd: fd, opts: opts}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("loop: NewStream(fd=%d): %w", fd, err)
	}
	if err := l.exec("NewStream", func() error { return l.addStream(s) }); err != nil {
		return nil, err
	}
	if opts.OnData != nil {
		s.buf = make([]byte, opts.ReadSize)
		if err := l.OnReadable(fd, s.readable); err != nil {
			s.forget()
			return nil, err
		}
	}
	return s, nil
}

// FD returns the stream's descriptor (-1 for a nil or zero Stream).
func (s *Stream) FD() int {
	if !s.usable() {
		return -1
	}
	return s.fd
}

// usable reports whether s is a stream NewStream made: a nil or zero
// Stream (whose descriptor would read as 0, standard input) is refused.
func (s *Stream) usable() bool { return s != nil && s.l != nil }

// readable reads one block (on the loop).
func (s *Stream) readable(int) {
	n, err := unix.Read(s.fd, s.buf)
	switch {
	case n > 0:
		s.opts.OnData(s, s.buf[:n])
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		// spurious: nothing to read after all
	case err == nil:
		s.fail(io.EOF)
	default:
		s.fail(err)
	}
}

// Write queues p: what the descriptor takes at once is written now, the
// rest is copied into the stream's buffer and goes out when it is
// writable. It returns len(p), or 0 and an error: event.ErrClosed after
// Close, or the error of the write (the stream is closed then).
func (s *Stream) Write(p []byte) (int, error) {
	if !s.usable() {
		return 0, fmt.Errorf("loop: Stream.Write: %w", event.ErrNilEvent)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, fmt.Errorf("loop: Stream.Write: %w", event.ErrClosed)
	}
	rest := p
	if len(s.out) == 0 {
		n, err := unix.Write(s.fd, p)
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			s.mu.Unlock()
			s.fail(err)
			return 0, fmt.Errorf("loop: Stream.Write: %w", err)
		}
		rest = p[max(n, 0):]
	}
	if len(rest) == 0 {
		s.mu.Unlock()
		return len(p), nil
	}
	s.out = append(s.out, rest...)
	watch := !s.watching
	s.watching = true
	s.mu.Unlock()
	if watch {
		// Outside the lock: the loop's writable callback takes it.
		if err := s.l.OnWritable(s.fd, s.writable); err != nil {
			s.fail(err)
			return 0, err
		}
	}
	return len(p), nil
}

// writable writes out the buffer (on the loop); once it is empty the
// stream stops watching for writability and tells OnDrain.
func (s *Stream) writable(int) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	var err error
	if len(s.out) > 0 {
		var n int
		n, err = unix.Write(s.fd, s.out)
		if n > 0 {
			s.out = s.out[:copy(s.out, s.out[n:])]
		}
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			err = nil
		}
	}
	drained := err == nil && len(s.out) == 0
	if drained {
		s.watching = false
		s.l.offFD(s.fd, dirWrite)
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		s.fail(err)
	case drained && s.opts.OnDrain != nil:
		s.opts.OnDrain(s)
	}
}

// Buffered returns how many written bytes wait for the descriptor to take
// them: the backpressure a producer should watch.
func (s *Stream) Buffered() int {
	if !s.usable() {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out)
}

// Close stops reading and writing, drops what is still buffered, closes
// the descriptor if the stream owns it (CloseFD), and calls OnClose with
// nil. Closing again is a no-op.
func (s *Stream) Close() error {
	if !s.usable() {
		return fmt.Errorf("loop: Stream.Close: %w", event.ErrNilEvent)
	}
	return s.close(nil)
}

// fail closes the stream after a read or write error (or end of stream).
func (s *Stream) fail(err error) { s.close(err) }

func (s *Stream) close(reason error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.out = nil
	s.mu.Unlock()
	s.forget()
	s.l.OffReadable(s.fd)
	s.l.OffWritable(s.fd)
	var err error
	if s.opts.CloseFD {
		err = syscall.Close(s.fd)
	}
	if fn := s.opts.OnClose; fn != nil {
		// On the loop (now, from a callback); in the caller once the
		// reactor is closed, so that OnClose is never lost.
		if s.l.r.Post(func() { fn(s, reason) }) != nil {
			fn(s, reason)
		}
	}
	return err
}
