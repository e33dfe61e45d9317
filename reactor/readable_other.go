//go:build !unix

package reactor

type pollFds struct{}

// readable says yes, so that the loop looks: a kernel with a descriptor
// (libuv's loop, the pure-Go driver's epoll set) exists on Unix systems
// only, so this is not reached.
func readable(int, *pollFds) bool { return true }
