package uv

// UvtIPCEnded reports whether p's receiving ended (the other end closed).
func UvtIPCEnded(p *IPC) bool {
	var ended bool
	p.e.r.Call(func() { ended = p.e.ended != nil })
	return ended
}
