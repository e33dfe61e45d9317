package event

import "strings"

// Flags are an event's state bits. They are read atomically and may be read
// from any goroutine; they change only with the event's owner held.
type Flags uint32

// The eleven flags of the event model. Each has one Go meaning:
const (
	// Closed: the event is complete. Start and AddCallback return ErrClosed;
	// Stop and Close are no-ops.
	Closed Flags = 1 << iota
	// ResultUsed: someone takes the result (a callback was added or the
	// result was replayed). An event that stores a result and is disposed
	// with the result never used is reported.
	ResultUsed
	// ErrorCaught: someone will receive the error. An error nobody will
	// receive is reported as unhandled; once reported, it is caught (the
	// report received it).
	ErrorCaught
	// ValueResult: the result is a value the callbacks may keep. A []byte
	// result is copied once per notification; without the flag a []byte is
	// the event's own buffer, valid only during the callback.
	ValueResult
	// GoOwned: the event is the Go object the user holds and owns no C
	// memory; its lifetime follows that object and the garbage collector
	// frees it, so its "unhandled error" report comes when it is collected
	// (see Future). Without it the event is C-owned and reached through an
	// event reference (see package eventref).
	GoOwned
	// NoFreeMemory: the event's memory belongs to someone else (for example
	// the reactor), so the last release closes the event but frees nothing.
	NoFreeMemory
	// ErrorHandled: the error was handled where it arose; awaiting the event
	// returns its outcome without the error, and it is never reported.
	ErrorHandled
	// Reference: the object is an event reference, not an event; Deref
	// follows it to the event it stands for.
	Reference
	// ObjectRef: the event carries a back-pointer to an owning object
	// (see SetObject and Object).
	ObjectRef
	// CloseFD: the file descriptor attached to the event is closed when the
	// event closes.
	CloseFD
	// Hidden: the event does not count as active: it neither keeps a
	// reactor's Run going nor prevents deadlock detection.
	Hidden

	// loopEvent marks kinds that live in a loop (timers, polls, ...), whose
	// Start and Stop count loop references. It is private: futures and other
	// pure events have Start and Stop as no-ops.
	loopEvent Flags = 1 << 31
	// startedOnce: the event was started at least once (Stopped, not Created).
	startedOnce Flags = 1 << 30

	// makerReports: the future's maker watches for its collection itself
	// (a reactor's coroutine, which names where it was spawned): the
	// future arranges no report of its own at collection.
	makerReports Flags = 1 << 28

	privateFlags = loopEvent | startedOnce | kindBit | makerReports
)

var flagNames = [...]string{
	"Closed", "ResultUsed", "ErrorCaught", "ValueResult", "GoOwned",
	"NoFreeMemory", "ErrorHandled", "Reference", "ObjectRef", "CloseFD", "Hidden",
}

// Has reports whether all bits of x are set in f.
func (f Flags) Has(x Flags) bool { return f&x == x }

// String lists the set flags by name, joined by "|", or "0".
func (f Flags) String() string {
	var b strings.Builder
	for i, name := range flagNames {
		if f&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(name)
		}
	}
	if b.Len() == 0 {
		return "0"
	}
	return b.String()
}
