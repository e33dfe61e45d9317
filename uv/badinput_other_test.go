//go:build !linux

package uv_test

import (
	"errors"
	"net"
	"testing"
)

// checkBacklog checks nothing here: the backlog a listener was given is
// read through Linux's sock_diag only.
func checkBacklog(t *testing.T, _ net.Listener) {
	t.Log("the backlog given is not checked: reading it needs Linux's sock_diag")
}

// listenQueues cannot be read here: it needs Linux's sock_diag.
func listenQueues(*net.TCPAddr) (waiting, backlog int, err error) {
	return 0, 0, errors.ErrUnsupported
}
