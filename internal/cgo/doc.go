// Package uvcgo is the thin layer over libuv: the only package that includes
// uv.h. It exports Go types only (ids, uintptr handles, Go structs), so no
// cgo type crosses into the packages above it. It is uvevent's plumbing, not
// a user-facing API, and internal so that programs cannot import it: use
// packages reactor and uv.
//
// Lifetime rules, stated once here and kept by the C shim (loop.c):
//   - a Loop's C memory is allocated by NewLoop and freed by Close;
//   - a handle's C memory is allocated by its New call and freed only in its
//     uv_close callback, which reports a CompletionClosed record for its id;
//   - a record's payload (Completion.Data) is shim-owned and valid until the
//     next Turn, which releases it, unless the caller took it (Take) and
//     releases it itself (Release);
//   - every call on a Loop or its handles is made by one goroutine at a time
//     (the reactor's loop goroutine), except AsyncSend, which is safe from
//     any goroutine while the handle is not closed.
//
// The loop contract every kind relies on is kept here, not by the kinds:
// every call that changes libuv's state marks the loop dirty (Dirty), so the
// reactor turns libuv before it parks again; every call that reads libuv's
// clock refreshes it first; requests in flight are counted (Requests).
//
//go:generate go run ./internal/gennocgo
package uvcgo
