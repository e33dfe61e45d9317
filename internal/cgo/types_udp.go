package uvcgo

// The UDP options UDPOption sets (udp.h's UVEV_UDP_*), pure Go so that
// both drivers name them.
const (
	UDPBroadcast     = 1 // uv_udp_set_broadcast
	UDPTTL           = 2 // uv_udp_set_ttl
	UDPMulticastTTL  = 3 // uv_udp_set_multicast_ttl
	UDPMulticastLoop = 4 // uv_udp_set_multicast_loop
)

// UDPBatch is the most datagrams one batched receive (recvmmsg) reads, on
// either driver (udp.h's UVEV_MMSG_CHUNKS).
const UDPBatch = 20

// Sender is a received datagram's sender as the socket gave it: IP[:IPLen]
// (4 or 16 bytes; 0 when the address was of no IP family), the port and
// the IPv6 scope. A value, so that reading one allocates nothing.
type Sender struct {
	IP    [16]byte
	IPLen int
	Port  int
	Zone  uint32
}
