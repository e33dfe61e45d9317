package uv

// pollMember is an event over a descriptor in a poller's set.
type pollMember interface {
	// kindName names the member's kind in Stats().Handles.
	kindName() string
	// fired delivers what epoll reported for the descriptor, on the loop.
	fired(events uint32)
	// Close closes the event (the reactor is closing).
	Close() error
}
