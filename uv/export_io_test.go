package uv

// IO.

// UvtKept returns the read buffers c keeps and their bytes, read from the
// loop.
func UvtKept(c *IO) (chunks, bytes int) {
	c.e.r.Call(func() { chunks, bytes = len(c.e.chunks), c.e.kept })
	return chunks, bytes
}
