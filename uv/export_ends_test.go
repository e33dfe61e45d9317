package uv

import "time"

// UvtReadDeadline returns the read deadline c's loop holds: zero for none,
// long ago once it passed.
func UvtReadDeadline(c *IO) time.Time {
	var t time.Time
	c.e.r.Call(func() { t = c.e.dl.read.time() })
	return t
}
