//go:build unix

package reactor

import "golang.org/x/sys/unix"

// pollFds is poll(2)'s argument for one descriptor, kept in the reactor so
// that a look costs no allocation.
type pollFds = [1]unix.PollFd

// readable reports whether fd is readable now (poll(2), no wait); an
// error counts as readable, so that the loop looks.
func readable(fd int, p *pollFds) bool {
	p[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	n, err := unix.Poll(p[:], 0)
	return err != nil || n > 0
}
