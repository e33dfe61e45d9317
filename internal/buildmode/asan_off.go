//go:build !asan

package buildmode

// ASan: the binary is built without -asan.
const ASan = false
