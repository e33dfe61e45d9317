package uvcgo

// The I/O kinds' constants, in pure Go like types.go (errors.go's
// cConstants checks them against C).

// ReadBufferSize is the size of each shim-owned read buffer (UVEV_READ_BUF).
const ReadBufferSize = 65536

// libuv statuses the I/O kinds read from records.
const (
	// EOF is libuv's end-of-stream status (UV_EOF) in CompletionRead records.
	EOF = -4095
	// EAGAIN is libuv's would-block status (UV_EAGAIN).
	EAGAIN = -11
	// ECANCELED is the status of a request cut short by its handle's close.
	ECANCELED = -125
)

// LingerReset is the Aux of the CompletionShutdown record a lingering
// close's timer reports when it reset its stream (status UV_ETIMEDOUT, N
// the bytes dropped), which tells it from a shutdown's (UVEV_LINGER_RESET).
const LingerReset = 1

// Linger is a lingering close in progress (Loop.LingerStart).
type Linger uintptr

// TTY modes (uv_tty_mode_t).
const (
	TTYModeNormal = 0
	TTYModeRaw    = 1
	TTYModeIO     = 2
)

// Handle types (uv_handle_type) of the handles a CompletionHandle record
// carries (its N).
const (
	HandleTypePipe = 7  // UV_NAMED_PIPE: a Unix domain socket
	HandleTypeTCP  = 12 // UV_TCP
)

// Tried hears the outcome of a write deferred into a loop's batch of
// tries (Loop.DeferTry): p is the bytes deferred (valid during the call
// only: they live in the batch's buffer), n how many the socket took
// (0 when it would block, or when an earlier try of the same stream in
// the batch did not go out whole), err the error that failed it.
type Tried interface {
	Tried(p []byte, n int, err error)
}
