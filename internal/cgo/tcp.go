package uvcgo

/*
#include "stream.h"
*/
import "C"

import (
	"unsafe"
)

// NewTCP creates a uv_tcp_t reporting for id, with no socket until
// ConnectTCP.
func (l *Loop) NewTCP(id uint64) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_tcp_new(l.mut(), C.uint64_t(id), &h); rc != 0 {
		return 0, errorOf("uv_tcp_init", int(rc))
	}
	return Handle(h), nil
}

// ipBytes is ip's address for a call (4 or 16 bytes).
func ipBytes(ip []byte) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(ip))) }

// ConnectTCP connects h to ip and port; a CompletionConnect record with h's
// id reports the outcome.
func (l *Loop) ConnectTCP(h Handle, ip []byte, port int, zone uint32) error {
	return errorOf("uv_tcp_connect", int(C.uvev_tcp_connect(l.mut(), C.uintptr_t(h), ipBytes(ip), C.int(len(ip)), C.int(port), C.uint32_t(zone))))
}

// TCPAddr returns h's local address, or its peer's with peer set: the IP
// (4 or 16 bytes), the port and the IPv6 scope.
func (l *Loop) TCPAddr(h Handle, peer bool) (ip []byte, port int, zone uint32, err error) {
	if peer {
		return l.tcpAddr(h, 1, "uv_tcp_getpeername")
	}
	return l.tcpAddr(h, 0, "uv_tcp_getsockname")
}

// TCPAcceptedPeer is the peer's address of h, a connection a TCP
// listener accepted (NewListener), as accept4(2) gave it: no system call.
func (l *Loop) TCPAcceptedPeer(h Handle) (ip []byte, port int, zone uint32, err error) {
	return l.tcpAddr(h, 2, "accept")
}

// tcpAddr is uvev_tcp_addr's address of h: which is 0 for the local one,
// 1 for the peer's (getpeername), 2 for the one accept4 gave; op names the
// call in an error.
func (l *Loop) tcpAddr(h Handle, which C.int, op string) (ip []byte, port int, zone uint32, err error) {
	var buf [16]byte
	var n, p C.int
	var z C.uint32_t
	l.crossings.Add(1)
	if rc := C.uvev_tcp_addr(C.uintptr_t(h), which, (*C.uint8_t)(unsafe.Pointer(&buf[0])), &n, &p, &z); rc != 0 {
		return nil, 0, 0, errorOf(op, int(rc))
	}
	return append([]byte(nil), buf[:n]...), int(p), uint32(z), nil
}

// TCPNoDelay sets or clears TCP_NODELAY.
func (l *Loop) TCPNoDelay(h Handle, on bool) error {
	v := C.int(0)
	if on {
		v = 1
	}
	l.crossings.Add(1)
	return errorOf("uv_tcp_nodelay", int(C.uvev_tcp_nodelay(C.uintptr_t(h), v)))
}

// TCPKeepAlive turns TCP keep-alive on (with the initial delay in seconds)
// or off.
func (l *Loop) TCPKeepAlive(h Handle, on bool, delaySec uint) error {
	v := C.int(0)
	if on {
		v = 1
	}
	l.crossings.Add(1)
	return errorOf("uv_tcp_keepalive", int(C.uvev_tcp_keepalive(C.uintptr_t(h), v, C.uint(delaySec))))
}
