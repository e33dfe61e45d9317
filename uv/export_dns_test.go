package uv

import "testing"

// What the external tests of the pure-Go driver's lookups need to see.

// UvtResolver is what the pure-Go driver's lookups ask of Go's resolver.
type UvtResolver = resolver

// UvtSetResolver makes the pure-Go driver's lookups submitted until the
// test ends use rs instead of Go's resolver. Tests that call it must not
// run in parallel.
func UvtSetResolver(t testing.TB, rs UvtResolver) {
	old := goResolver
	goResolver = rs
	t.Cleanup(func() { goResolver = old })
}

// UvtResolverError is the DNSError a lookup on the pure-Go driver reports
// for err, an error of Go's resolver.
func UvtResolverError(err error) error {
	return &DNSError{Op: "uv_getaddrinfo", Name: "x", Code: resolverCode(err), Err: err}
}
