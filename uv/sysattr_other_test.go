//go:build !linux

package uv_test

import (
	"os"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// What stands off Linux for sysattr_linux_test.go's.

// openPTY skips: the tests open Linux's /dev/ptmx and /dev/pts.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Skipf("no Linux pseudo-terminal (/dev/ptmx, /dev/pts) on %s to test a TTY on", runtime.GOOS)
	return nil, nil
}

// ptyTermios reads a terminal's settings.
func ptyTermios(fd int) (*unix.Termios, error) { return unix.IoctlGetTermios(fd, unix.TIOCGETA) }

// userNamespaceAttr is nil: no user namespaces.
func userNamespaceAttr() *syscall.SysProcAttr { return nil }

// pidFDAttr is nil: no pidfd.
func pidFDAttr() *syscall.SysProcAttr { return nil }
