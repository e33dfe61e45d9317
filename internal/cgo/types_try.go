//go:build cgo

package uvcgo

// A loop's batch of tries (Loop.DeferTry, stream.go), in pure Go like
// types.go but built with cgo only: without it there is no loop to batch
// for, and nothing uses them.

// tryEntry is one write of a batch: uvev_try, in Go memory (no Go
// pointers), passed to C for the length of the call.
type tryEntry struct {
	h      uintptr
	off, n uint64
	prev   int64
	res    int64
}

// maxTryBatch bounds the bytes a batch of tries holds: DeferTry refuses
// beyond it and the caller flushes (a callback sending megabytes in one
// turn copies no more than this into the batch).
const maxTryBatch = 256 << 10

// tryBatch is a loop's writes deferred to one crossing (Loop.DeferTry,
// FlushTries); loop-owned.
type tryBatch struct {
	on    bool       // deferring: the reactor is dispatching a turn's records
	buf   []byte     // the deferred bytes, each write's at its off
	tries []tryEntry // in the order they were deferred
	to    []Tried    // who hears each outcome
	made  bool       // the batch was tried: outcomes are being delivered
	next  int        // the next outcome to deliver
	depth int        // FlushTries calls in progress (an outcome's handler may flush)
}
