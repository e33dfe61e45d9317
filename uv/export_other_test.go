//go:build !linux

package uv

// No inotify descriptor and no poller exist off Linux (poller_go_other.go).
func inotifyChildWatches(*UvtReactor) int { return 0 }
func uvtPoller(*UvtReactor) *goPoller     { return nil }
