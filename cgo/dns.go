package uvcgo

/*
#include <netdb.h>
#include "dns.h"
*/
import "C"

import (
	"bytes"
	"unsafe"
)

// getaddrinfo and getnameinfo flags, and the address families, from the C
// library.
const (
	AIPassive     = C.AI_PASSIVE
	AINumericHost = C.AI_NUMERICHOST
	AINumericServ = C.AI_NUMERICSERV

	NINumericHost = C.NI_NUMERICHOST
	NINumericServ = C.NI_NUMERICSERV
	NINameReqd    = C.NI_NAMEREQD
	NIDgram       = C.NI_DGRAM
	NINoFQDN      = C.NI_NOFQDN

	AFUnspec = C.AF_UNSPEC
	AFInet   = C.AF_INET
	AFInet6  = C.AF_INET6

	SockStream = C.SOCK_STREAM
	SockDgram  = C.SOCK_DGRAM
)

// libuv's getaddrinfo error codes (UV_EAI_*), one for each EAI_* of the C
// library.
const (
	EAIAddrFamily = C.UV_EAI_ADDRFAMILY
	EAIAgain      = C.UV_EAI_AGAIN
	EAIBadFlags   = C.UV_EAI_BADFLAGS
	EAIBadHints   = C.UV_EAI_BADHINTS
	EAICanceled   = C.UV_EAI_CANCELED
	EAIFail       = C.UV_EAI_FAIL
	EAIFamily     = C.UV_EAI_FAMILY
	EAIMemory     = C.UV_EAI_MEMORY
	EAINoData     = C.UV_EAI_NODATA
	EAINoName     = C.UV_EAI_NONAME
	EAIOverflow   = C.UV_EAI_OVERFLOW
	EAIProtocol   = C.UV_EAI_PROTOCOL
	EAIService    = C.UV_EAI_SERVICE
	EAISockType   = C.UV_EAI_SOCKTYPE
)

// AddrInfoEntry is one address of a getaddrinfo answer; its layout is
// that of uvev_addr.
type AddrInfoEntry struct {
	Family   int32
	SockType int32
	Protocol int32
	Zone     uint32
	Addr     [16]byte // the first 4 for AF_INET
	Port     uint16
	_        uint16
}

var _ [unsafe.Sizeof(AddrInfoEntry{}) - unsafe.Sizeof(C.uvev_addr{})]struct{}
var _ [unsafe.Sizeof(C.uvev_addr{}) - unsafe.Sizeof(AddrInfoEntry{})]struct{}

// GetAddrInfo submits a uv_getaddrinfo for node and service (either may be
// empty, not both) with the given hints; it reports a CompletionAddrInfo
// record for id, whose payload AddrInfoEntries reads. It counts in
// Requests until then.
func (l *Loop) GetAddrInfo(id uint64, node, service string, family, sockType, flags int) (Request, error) {
	// Both strings go to C as NUL-terminated Go memory holding no
	// pointers, which libuv copies during the call: no C allocation, no
	// extra crossing.
	buf := make([]byte, 0, len(node)+len(service)+2)
	buf = append(append(append(buf, node...), 0), service...)
	buf = append(buf, 0)
	var cn, cs *C.char
	if node != "" {
		cn = (*C.char)(unsafe.Pointer(&buf[0]))
	}
	if service != "" {
		cs = (*C.char)(unsafe.Pointer(&buf[len(node)+1]))
	}
	var r C.uintptr_t
	if rc := C.uvev_getaddrinfo(l.mut(), C.uint64_t(id), cn, cs, C.int(family), C.int(sockType), C.int(flags), &r); rc != 0 {
		return 0, errorOf("uv_getaddrinfo", int(rc))
	}
	return Request(r), nil
}

// AddrInfoEntries returns the addresses of a CompletionAddrInfo record,
// over C memory: valid only until the next Turn (copy what you keep).
func AddrInfoEntries(c *Completion) []AddrInfoEntry {
	if c.Data == 0 || c.N <= 0 {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&c.Data)) // C memory (see Bytes)
	return unsafe.Slice((*AddrInfoEntry)(p), int(c.N))
}

// GetNameInfo submits a uv_getnameinfo for the address (4 or 16 bytes of
// addr, by family), port and IPv6 zone; it reports a CompletionNameInfo
// record for id, whose payload NameInfoStrings reads.
func (l *Loop) GetNameInfo(id uint64, family int, addr [16]byte, port int, zone uint32, flags int) (Request, error) {
	var r C.uintptr_t
	rc := C.uvev_getnameinfo(l.mut(), C.uint64_t(id), C.int(family), (*C.uint8_t)(unsafe.Pointer(&addr[0])),
		C.int(port), C.uint32_t(zone), C.int(flags), &r)
	if rc != 0 {
		return 0, errorOf("uv_getnameinfo", int(rc))
	}
	return Request(r), nil
}

// NameInfoStrings copies the host and service of a CompletionNameInfo
// record.
func NameInfoStrings(c *Completion) (host, service string) {
	h, rest, _ := bytes.Cut(c.Bytes(), []byte{0})
	sv, _, _ := bytes.Cut(rest, []byte{0})
	return string(h), string(sv)
}

// CancelDNS cancels a lookup that has not started (uv_cancel); EBUSY when
// it runs already. Call it only while the request is in flight.
func (l *Loop) CancelDNS(r Request) error {
	l.mut()
	return errorOf("uv_cancel", int(C.uvev_dns_cancel(C.uintptr_t(r))))
}

// ErrorName returns libuv's name for a code ("EAI_NONAME") and its message.
func ErrorName(code int) (name, message string) {
	e := Error{Code: code}
	return e.Name(), C.GoString(C.uv_strerror(C.int(code)))
}
