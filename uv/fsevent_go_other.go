//go:build !linux

package uv

import "github.com/uvevent/uvevent/reactor"

// newGoFSEvent refuses: the pure-Go driver watches the file system with
// inotify (fsevent_go_linux.go).
func newGoFSEvent(*reactor.Reactor, fsState) (*FSEvent, error) {
	return nil, unsupported("NewFSEvent on the pure-Go driver (inotify)")
}
