//go:build !race

package buildmode

// Race: the binary is built without -race.
const Race = false
