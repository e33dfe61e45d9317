package uv

// inotifyChildWatches counts the child watchers of recursive FSEvents on
// u's inotify descriptor.
func inotifyChildWatches(u *UvtReactor) int {
	n := 0
	u.Call(func() {
		in, ok := inotifies.Load(u.Reactor)
		if !ok {
			return
		}
		for _, l := range in.(*inotify).byWD {
			for _, w := range l.watchers {
				if w.child {
					n++
				}
			}
		}
	})
	return n
}

// uvtPoller is u's poller, nil if it has none.
func uvtPoller(u *UvtReactor) *goPoller {
	goPollers.Lock()
	defer goPollers.Unlock()
	return goPollers.m[u.Reactor]
}
