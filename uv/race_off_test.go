//go:build !race

package uv_test

// raceEnabled: the race detector is off.
const raceEnabled = false
