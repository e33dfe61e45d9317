package uv

// Requests.

// UvtCancelable reports whether closing q now would ask libuv to cancel
// it: its C request is still libuv's, not freed by a completion that the
// turn has yet to hand to q.
func UvtCancelable[T any](q *FSRequest[T]) bool { return q.cancelable() }
