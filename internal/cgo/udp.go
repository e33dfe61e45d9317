package uvcgo

/*
#cgo noescape uvev_sockaddr_parse
#cgo nocallback uvev_sockaddr_parse
#include <stdlib.h>

#include "udp.h"
*/
import "C"

import "unsafe"

// NewUDP creates a uv_udp_t reporting for id; family AF_INET or AF_INET6
// creates the socket now.
func (l *Loop) NewUDP(id uint64, family int) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_udp_new(l.mut(), C.uint64_t(id), C.int(family), &h); rc != 0 {
		return 0, errorOf("uv_udp_init_ex", int(rc))
	}
	return Handle(h), nil
}

// BindUDP binds h to ip (4 or 16 bytes) and port; reuseAddr sets
// SO_REUSEADDR (several sockets on one port), v6only refuses IPv4.
func (l *Loop) BindUDP(h Handle, ip []byte, port int, zone uint32, reuseAddr, v6only bool) error {
	var flags C.uint
	if reuseAddr {
		flags |= C.UV_UDP_REUSEADDR
	}
	if v6only {
		flags |= C.UV_UDP_IPV6ONLY
	}
	l.mut()
	return errorOf("uv_udp_bind", int(C.uvev_udp_bind(C.uintptr_t(h), ipBytes(ip), C.int(len(ip)), C.int(port), C.uint32_t(zone), flags)))
}

// UDPRecvStart starts receiving: each datagram is a CompletionUDPRecord
// record (see Datagram).
func (l *Loop) UDPRecvStart(h Handle) error {
	l.mut()
	return errorOf("uv_udp_recv_start", int(C.uvev_udp_recv_start(C.uintptr_t(h))))
}

// UDPRecvStop stops receiving.
func (l *Loop) UDPRecvStop(h Handle) error {
	l.mut()
	return errorOf("uv_udp_recv_stop", int(C.uvev_udp_recv_stop(C.uintptr_t(h))))
}

// UDPTrySend sends p to ip and port at once if the socket takes it (sent
// false, no error: it would block, or sends are queued).
func (l *Loop) UDPTrySend(h Handle, p []byte, ip []byte, port int, zone uint32) (sent bool, err error) {
	l.crossings.Add(1)
	n := int(C.uvev_udp_try_send(C.uintptr_t(h), cbytes(p), C.size_t(len(p)), ipBytes(ip), C.int(len(ip)), C.int(port), C.uint32_t(zone)))
	switch {
	case n >= 0:
		return true, nil
	case n == C.UV_EAGAIN:
		return false, nil
	}
	return false, errorOf("uv_udp_try_send", n)
}

// UDPSend queues p (copied into C memory the request owns) for ip and
// port; a CompletionUDPSend record with h's id reports its end.
func (l *Loop) UDPSend(h Handle, p []byte, ip []byte, port int, zone uint32) error {
	return errorOf("uv_udp_send", int(C.uvev_udp_send(l.mut(), C.uintptr_t(h), cbytes(p), C.size_t(len(p)), ipBytes(ip), C.int(len(ip)), C.int(port), C.uint32_t(zone))))
}

// UDPAddr returns h's local address.
func (l *Loop) UDPAddr(h Handle) (ip []byte, port int, zone uint32, err error) {
	var buf [16]byte
	var n, p C.int
	var z C.uint32_t
	l.crossings.Add(1)
	if rc := C.uvev_udp_addr(C.uintptr_t(h), (*C.uint8_t)(unsafe.Pointer(&buf[0])), &n, &p, &z); rc != 0 {
		return nil, 0, 0, errorOf("uv_udp_getsockname", int(rc))
	}
	return append([]byte(nil), buf[:n]...), int(p), uint32(z), nil
}

// Datagram reads a CompletionUDPRecv record: the datagram (a view of C
// memory, valid until the next Turn unless taken), its sender, and whether
// it was truncated to the buffer. It allocates nothing: the address is
// parsed into a value (uvev_sockaddr_parse keeps no pointer it is given).
func Datagram(c *Completion) (payload []byte, from Sender, truncated bool) {
	if c.Data == 0 {
		return nil, Sender{}, false
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&c.Data)) // C memory, never moved
	d := (*C.uvev_dgram)(p)
	var n, pt C.int
	var z C.uint32_t
	if C.uvev_sockaddr_parse(&d.from, (*C.uint8_t)(unsafe.Pointer(&from.IP[0])), &n, &pt, &z) == 0 {
		from.IPLen, from.Port, from.Zone = int(n), int(pt), uint32(z)
	}
	if c.N > 0 {
		payload = unsafe.Slice((*byte)(unsafe.Add(p, C.UVEV_DGRAM_BYTES)), int(c.N))
	}
	return payload, from, c.Aux != 0
}

// udpConstants gives the C values of the UDP options types_udp.go
// mirrors, for the test that keeps the two in step.
func udpConstants() map[string][2]int {
	return map[string][2]int{
		"UDP_BROADCAST": {UDPBroadcast, C.UVEV_UDP_BROADCAST}, "UDP_TTL": {UDPTTL, C.UVEV_UDP_TTL},
		"UDP_MULTICAST_TTL": {UDPMulticastTTL, C.UVEV_UDP_MULTICAST_TTL}, "UDP_MULTICAST_LOOP": {UDPMulticastLoop, C.UVEV_UDP_MULTICAST_LOOP},
		"MMSG_CHUNKS": {UDPBatch, C.UVEV_MMSG_CHUNKS},
	}
}

// udpOptionNames are libuv's names of the options, for errors.
var udpOptionNames = map[int]string{
	UDPBroadcast:     "uv_udp_set_broadcast",
	UDPTTL:           "uv_udp_set_ttl",
	UDPMulticastTTL:  "uv_udp_set_multicast_ttl",
	UDPMulticastLoop: "uv_udp_set_multicast_loop",
}

// UDPOption sets one of h's options (UDPBroadcast, ...) to v (0 or 1 for
// the switches).
func (l *Loop) UDPOption(h Handle, opt, v int) error {
	l.crossings.Add(1)
	return errorOf(udpOptionNames[opt], int(C.uvev_udp_option(C.uintptr_t(h), C.int(opt), C.int(v))))
}

// cstring is s as a C string for the length of a call ("" is NULL); free
// it after.
func cstring(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

// UDPMulticastInterface sends h's multicast datagrams out of the interface
// ifaddr names (an IPv4 address of it, or "::%name"; "" for the system's
// choice).
func (l *Loop) UDPMulticastInterface(h Handle, ifaddr string) error {
	cs := cstring(ifaddr)
	defer C.free(unsafe.Pointer(cs))
	l.crossings.Add(1)
	return errorOf("uv_udp_set_multicast_interface", int(C.uvev_udp_multicast_interface(C.uintptr_t(h), cs)))
}

// UDPMembership joins (join) or leaves the multicast group on the
// interface ifaddr names ("" for any), from source only when source is not
// "" (source-specific multicast).
func (l *Loop) UDPMembership(h Handle, group, ifaddr, source string, join bool) error {
	cg, ci, cs := cstring(group), cstring(ifaddr), cstring(source)
	defer func() {
		C.free(unsafe.Pointer(cg))
		C.free(unsafe.Pointer(ci))
		C.free(unsafe.Pointer(cs))
	}()
	j := C.int(0)
	if join {
		j = 1
	}
	op := "uv_udp_set_membership"
	if source != "" {
		op = "uv_udp_set_source_membership"
	}
	l.crossings.Add(1)
	return errorOf(op, int(C.uvev_udp_membership(C.uintptr_t(h), cg, ci, cs, j)))
}

// udpBlocks is how many recvmmsg blocks l has malloc'd: one at most, the
// loop's, shared by its batched UDPs (for the tests).
func (l *Loop) udpBlocks() int64 { return int64(l.p.mmsg_blocks) }

// UDPBatched reports whether h receives in batches (recvmmsg).
func (l *Loop) UDPBatched(h Handle) bool {
	l.crossings.Add(1)
	return C.uvev_udp_batched(C.uintptr_t(h)) == 1
}
