// Package nettest runs golang.org/x/net/nettest's net.Conn conformance
// suite over uv.IO, on each driver. It is a module of its own, so that
// uvevent's go.mod gains no dependency: `make nettest` runs it (with
// -race).
package nettest
