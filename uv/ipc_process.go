package uv

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/reactor"
)

// openIPC makes the IPC pipe of ProcessOptions.IPC: a pair of Unix stream
// sockets, the parent's end an IPC on r, the child's end returned (to be
// its descriptor IPCFD) and closed after the fork.
func (s *stdioSetup) openIPC(r *reactor.Reactor) (uintptr, error) {
	fds, err := socketpairBlocking(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return 0, fmt.Errorf("IPC pipe: %w", os.NewSyscallError("socketpair", err))
	}
	p, err := OpenIPC(r, fds[0])
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return 0, fmt.Errorf("IPC pipe: %w", err)
	}
	s.ipc = p
	child := os.NewFile(uintptr(fds[1]), "|ipc")
	s.child = append(s.child, child)
	return child.Fd(), nil
}

// IPC returns the parent's end of the child's IPC pipe when it was started
// with ProcessOptions.IPC, else nil. It is the caller's: it is not closed
// with the Process (close it when done; the child then receives io.EOF).
func (p *Process) IPC() *IPC {
	if p == nil {
		return nil
	}
	return p.ipc
}
