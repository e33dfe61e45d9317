package uvcgo

/*
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
// it was truncated to the buffer.
func Datagram(c *Completion) (payload []byte, ip []byte, port int, zone uint32, truncated bool) {
	if c.Data == 0 {
		return nil, nil, 0, 0, false
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&c.Data)) // C memory, never moved
	d := (*C.uvev_dgram)(p)
	var buf [16]byte
	var n, pt C.int
	var z C.uint32_t
	if C.uvev_sockaddr_parse(&d.from, (*C.uint8_t)(unsafe.Pointer(&buf[0])), &n, &pt, &z) == 0 {
		ip, port, zone = append([]byte(nil), buf[:n]...), int(pt), uint32(z)
	}
	if c.N > 0 {
		payload = unsafe.Slice((*byte)(unsafe.Add(p, C.UVEV_DGRAM_BYTES)), int(c.N))
	}
	return payload, ip, port, zone, c.Aux != 0
}
