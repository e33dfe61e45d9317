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
