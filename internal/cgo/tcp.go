package uvcgo

/*
#cgo noescape uvev_accepted_take
#cgo nocallback uvev_accepted_take
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

// TakeAccepted takes p, the payload of a TCP listener's connection record
// (NewListener): the connection's descriptor, from now on the caller's,
// left unopened in libuv (OpenTCPFD opens it), and the peer's address as
// accept4(2) gave it (no system call; err when it gave none, the
// descriptor being the caller's all the same). p is freed. It allocates
// nothing: the address is a value (uvev_accepted_take keeps no pointer
// it is given).
func (l *Loop) TakeAccepted(p uintptr) (fd int, peer Peer, err error) {
	var n, pt, f C.int
	var z C.uint32_t
	l.crossings.Add(1)
	if rc := C.uvev_accepted_take(C.uintptr_t(p), &f, (*C.uint8_t)(unsafe.Pointer(&peer.IP[0])), &n, &pt, &z); rc != 0 {
		return int(f), Peer{}, errorOf("accept", int(rc))
	}
	peer.IPLen, peer.Port, peer.Zone = int(n), int(pt), uint32(z)
	return int(f), peer, nil
}

// OpenTCPFD opens fd, a connected TCP socket, in a new uv_tcp_t reporting
// for id (uv_tcp_open), which owns fd from then on; when it fails, fd is
// still the caller's.
func (l *Loop) OpenTCPFD(id uint64, fd int) (Handle, error) {
	var h C.uintptr_t
	if rc := C.uvev_tcp_open_fd(l.mut(), C.uint64_t(id), C.int(fd), &h); rc != 0 {
		return 0, errorOf("uv_tcp_open", int(rc))
	}
	return Handle(h), nil
}

// tcpAddr is uvev_tcp_addr's address of h: which is 0 for the local one,
// 1 for the peer's (getpeername); op names the call in an error.
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
