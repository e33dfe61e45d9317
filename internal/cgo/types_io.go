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

// TTY modes (uv_tty_mode_t).
const (
	TTYModeNormal = 0
	TTYModeRaw    = 1
	TTYModeIO     = 2
)
