package uvcgo

// Peer is an accepted TCP connection's peer as accept4(2) gave it
// (TakeAccepted): IP[:IPLen] (4 or 16 bytes), the port and the IPv6
// scope. A value, so that taking one allocates nothing.
type Peer struct {
	IP    [16]byte
	IPLen int
	Port  int
	Zone  uint32
}
