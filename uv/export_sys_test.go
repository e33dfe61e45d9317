package uv

import "github.com/uvevent/uvevent/reactor"

// What the external tests of poll, poll proxy, dns and fs event need to
// see.

// UvtPolling returns the mask p's descriptor is polled for now (0:
// stopped).
func UvtPolling(p *Poll) PollEvents {
	var m PollEvents
	p.e.drv.reactorOf().Exec(func() { m = p.e.polling })
	return m
}

// UvtEAIErrors returns the UV_EAI_* codes and their errors.
func UvtEAIErrors() map[int]error {
	m := map[int]error{}
	for code, c := range eaiCodes {
		m[code] = c.err
	}
	return m
}

// UvtWatchedDirs lists the directories below f's root that have a watch.
func UvtWatchedDirs(f *FSEvent) []string {
	var dirs []string
	f.e.drv.reactorOf().Exec(func() { dirs = f.e.watchedDirs() })
	return dirs
}

// UvtFSHandles counts what u's fs events hold the way libuv counts their
// C handles: one per FSEvent made and not yet freed, one per child watch
// of a recursive one. On the libuv driver it is Stats().CHandles; on the
// pure-Go driver, the FSEvents in Stats().Handles and the child watchers
// on the reactor's inotify descriptor.
func UvtFSHandles(u *UvtReactor) int {
	s := u.Stats()
	if u.Driver() == reactor.DriverLibuv {
		return s.CHandles
	}
	n := s.Handles["fsevent"]
	u.Exec(func() {
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

// UvtWatchError is the error a watch that cannot be added reports.
func UvtWatchError(path string, err error) error { return watchError(path, err) }

// UvtSignalQueued reports whether s has a notification queued on its loop
// that has not run yet.
func UvtSignalQueued(s *Signal) bool { return s.pending.Load() }
