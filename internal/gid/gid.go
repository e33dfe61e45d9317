// Package gid tells goroutines apart, cheaply.
//
// The reactor must know whether a call comes from its loop goroutine (run it
// at once) or from elsewhere (queue it). Go has no public goroutine identity,
// so Current returns the address of the runtime's descriptor of the calling
// goroutine. The value is only compared for equality against the value the
// loop goroutine recorded while that goroutine is still running; a descriptor
// reused after a goroutine exits can therefore never be mistaken for a live
// loop goroutine.
package gid

// ID identifies a running goroutine. The zero ID is never returned.
type ID uintptr
