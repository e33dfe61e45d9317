// Package buildmode says which of the go command's instrumented builds
// (-race, -asan) this binary is, for the tests that count allocations:
// both change what allocates (the race detector makes sync.Pool drop a
// share of what is put back; AddressSanitizer's instrumentation makes
// values escape that otherwise would not), so such counts are reported,
// not judged, under them.
package buildmode

// Instrumented names the instrumentation on ("race", "asan", or both), or
// is empty for an ordinary build.
func Instrumented() string {
	switch {
	case Race && ASan:
		return "race+asan"
	case Race:
		return "race"
	case ASan:
		return "asan"
	}
	return ""
}
