//go:build !cgo

// Command x1 measures cross-goroutine wake-ups beside libuv's own driving
// mode, which needs cgo; built without it, it says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "x1: built without cgo: libuv's driving mode cannot be measured")
	os.Exit(2)
}
