//go:build race

package uv_test

// raceEnabled: the race detector is on; sync.Pool then drops a share of
// what is put back on purpose, so pooled buffers are made again.
const raceEnabled = true
