//go:build asan

package buildmode

// ASan: the binary is built with -asan.
const ASan = true
