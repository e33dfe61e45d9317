package uv

// What the external tests of poll, poll proxy and dns need to see.

// UvtPolling returns the mask libuv polls p's descriptor for now (0:
// stopped).
func UvtPolling(p *Poll) PollEvents {
	var m PollEvents
	p.e.r.Exec(func() { m = p.e.polling })
	return m
}

// UvtEAIErrors returns the UV_EAI_* codes and their errors.
func UvtEAIErrors() map[int]error { return eaiErrors }
