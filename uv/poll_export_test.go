package uv

// UvtPolling returns the mask libuv polls p's descriptor for now (0:
// stopped).
func UvtPolling(p *Poll) PollEvents {
	var m PollEvents
	p.e.r.Exec(func() { m = p.e.polling })
	return m
}
