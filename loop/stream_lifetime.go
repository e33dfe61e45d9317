package loop

import (
	"runtime"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/internal/kind"
)

// The loop's record of its streams, so that its Close (and the reactor's)
// closes them: weak, so that a stream the program dropped can be
// collected, and kept on the loop.

// droppedStream is what the cleanup of a stream dropped without Close
// needs; it never points at the stream.
type droppedStream struct {
	l       *Loop
	id      uint64
	fd      int
	closeFD bool
}

// addStream records s (on the loop) and arms its cleanup. The first stream
// registers the closer that closes the loop's streams when the reactor
// closes.
func (l *Loop) addStream(s *Stream) error {
	if l.streams == nil {
		l.streams = map[uint64]weak.Pointer[Stream]{}
		l.unhook = kind.HostOf(l.r.Owner()).AddCloser(l.closeStreams)
	}
	s.id = l.newID()
	l.streams[s.id] = weak.Make(s)
	s.cleanup = runtime.AddCleanup(s, dropStream, droppedStream{l, s.id, s.fd, s.opts.CloseFD})
	return nil
}

// forget takes s off the loop's record, when it closes.
func (s *Stream) forget() {
	s.cleanup.Stop()
	s.l.r.Call(func() { delete(s.l.streams, s.id) })
}

// dropStream runs when a stream was collected without Close: it neither
// read nor had writes waiting (either would have kept it reachable from
// the loop), so nothing watches its descriptor; the one it owns is closed.
func dropStream(d droppedStream) {
	if d.closeFD {
		unix.Close(d.fd)
	}
	d.l.r.Post(func() { delete(d.l.streams, d.id) }) // refused once closed: nothing to forget
}

// closeStreams closes every stream of the loop still alive (on the loop,
// or in the reactor's Close).
func (l *Loop) closeStreams() {
	for id, w := range l.streams {
		delete(l.streams, id)
		if s := w.Value(); s != nil {
			s.Close()
		}
	}
}
