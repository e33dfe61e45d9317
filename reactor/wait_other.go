//go:build !linux

package reactor

// Without epoll the watcher cannot hold the kernel's descriptor apart from
// Go's netpoller: a loop that parks in Go looks at the kernel every
// millisecond instead (polling).
func (r *Reactor) watchKernel() bool {
	r.polling = true
	return false
}

func (r *Reactor) unwatchKernel() {}
