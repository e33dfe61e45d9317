//go:build race

package buildmode

// Race: the binary is built with -race.
const Race = true
