package uv

import (
	"bytes"
	"fmt"

	"github.com/uvevent/uvevent/event"
)

// MaxLineLength bounds what ReadLines keeps of a line while it waits for
// the line's end: a longer line is given in pieces of this length, so a
// stream without newlines cannot grow memory without bound.
const MaxLineLength = 64 << 10

// ReadLines starts c and calls fn on the loop goroutine with each line
// read from it, without its line ending ("\n", or "\r\n"). A last line
// with no newline is given when the stream ends. Then fn is called once
// more, with a nil line and the error that ended the stream — io.EOF at
// its clean end, an error matching ErrClosed when c was closed first, the
// stream's error otherwise — and ReadLines stops c (undoing its own
// Start; c stays open, for its writing side: close it when done). line is
// valid during the call only: copy it to keep it.
//
// It is how a child's output is read on the loop (StdioLoop and
// Process.StdoutIO). A nil fn is an error matching event.ErrNilCallback; a
// zero or closed IO, the error Start gives.
func ReadLines(c *IO, fn func(line []byte, err error)) error {
	if c.zero() {
		return errZero("IO")
	}
	if fn == nil {
		return fmt.Errorf("uv: ReadLines: nil func: %w", event.ErrNilCallback)
	}
	var partial []byte // the line begun, not ended yet
	ended := false
	// The callback does not capture c: a started IO is held by its
	// reactor, and a reference from its own callback would keep it from
	// the collector once dropped.
	cb, err := event.Subscribe(c, func(ev event.Event, res any, err error) {
		if ended {
			return
		}
		if err != nil {
			ended = true
			if len(partial) > 0 {
				fn(trimCR(partial), nil)
				partial = nil
			}
			ev.Stop()
			fn(nil, err)
			return
		}
		p := readBytes(res)
		for len(p) > 0 {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				partial = append(partial, p...)
				for len(partial) >= MaxLineLength {
					fn(partial[:MaxLineLength], nil)
					partial = append(partial[:0], partial[MaxLineLength:]...)
				}
				return
			}
			line := p[:i]
			if len(partial) > 0 {
				partial = append(partial, line...)
				line = partial
			}
			fn(trimCR(line), nil)
			partial = partial[:0]
			p = p[i+1:]
		}
	})
	if err != nil {
		return fmt.Errorf("uv: ReadLines: %w", err)
	}
	if err := c.Start(); err != nil {
		c.DelCallback(cb)
		return fmt.Errorf("uv: ReadLines: %w", err)
	}
	return nil
}

// trimCR drops the "\r" of a "\r\n" line ending.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
