package uvcgo

/*
#include <netdb.h>
#include <sys/socket.h>
#include "dns.h"
#include "fsevent.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"
)

// AddrInfoEntry (types_sys.go) has uvev_addr's layout.
var _ [unsafe.Sizeof(AddrInfoEntry{}) - unsafe.Sizeof(C.uvev_addr{})]struct{}
var _ [unsafe.Sizeof(C.uvev_addr{}) - unsafe.Sizeof(AddrInfoEntry{})]struct{}

// GetAddrInfo submits a uv_getaddrinfo for node and service (either may be
// empty, not both) with the given hints; it reports a CompletionAddrInfo
// record for id, whose payload AddrInfoEntries reads. It counts in
// Requests until then.
func (l *Loop) GetAddrInfo(id uint64, node, service string, family, sockType, flags int) (Request, error) {
	// The strings go to C as Go bytes with their lengths (no pointers in
	// them, copied during the call): no C allocation, no extra crossing.
	rc := C.uvev_getaddrinfo(l.mut(), C.uint64_t(id), (*C.char)(unsafe.Pointer(unsafe.StringData(node))), C.size_t(len(node)),
		(*C.char)(unsafe.Pointer(unsafe.StringData(service))), C.size_t(len(service)), C.int(family), C.int(sockType), C.int(flags))
	return request("uv_getaddrinfo", rc)
}

// request turns a submission's return (the request's address, or a
// negative libuv error) into a Request.
func request(op string, rc C.intptr_t) (Request, error) {
	if rc < 0 {
		return 0, errorOf(op, int(rc))
	}
	return Request(rc), nil
}

// GetNameInfo submits a uv_getnameinfo for the address (4 or 16 bytes of
// addr, by family), port and IPv6 zone; it reports a CompletionNameInfo
// record for id, whose payload NameInfoStrings reads.
func (l *Loop) GetNameInfo(id uint64, family int, addr [16]byte, port int, zone uint32, flags int) (Request, error) {
	hi, lo := binary.BigEndian.Uint64(addr[:8]), binary.BigEndian.Uint64(addr[8:])
	rc := C.uvev_getnameinfo(l.mut(), C.uint64_t(id), C.int(family), C.uint64_t(hi), C.uint64_t(lo),
		C.int(port), C.uint32_t(zone), C.int(flags))
	return request("uv_getnameinfo", rc)
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
	return e.Name(), errString(code, true)
}

// sysConstants gives the C values of the constants types_sys.go mirrors,
// for the test that keeps the two in step.
func sysConstants() map[string][2]int {
	return map[string][2]int{
		"UV_READABLE": {PollReadable, C.UV_READABLE}, "UV_WRITABLE": {PollWritable, C.UV_WRITABLE},
		"UV_DISCONNECT": {PollDisconnect, C.UV_DISCONNECT}, "UV_PRIORITIZED": {PollPrioritized, C.UV_PRIORITIZED},
		"UV_RENAME": {FSEventRename, C.UV_RENAME}, "UV_CHANGE": {FSEventChange, C.UV_CHANGE},
		"UVEV_FSEVENT_CHILD": {FSEventChild, C.UVEV_FSEVENT_CHILD}, "UVEV_FSEVENT_SELF": {FSEventSelf, C.UVEV_FSEVENT_SELF},
		"AI_PASSIVE": {AIPassive, C.AI_PASSIVE}, "AI_NUMERICHOST": {AINumericHost, C.AI_NUMERICHOST},
		"AI_NUMERICSERV": {AINumericServ, C.AI_NUMERICSERV},
		"NI_NUMERICHOST": {NINumericHost, C.NI_NUMERICHOST}, "NI_NUMERICSERV": {NINumericServ, C.NI_NUMERICSERV},
		"NI_NOFQDN": {NINoFQDN, C.NI_NOFQDN}, "NI_NAMEREQD": {NINameReqd, C.NI_NAMEREQD}, "NI_DGRAM": {NIDgram, C.NI_DGRAM},
		"AF_UNSPEC": {AFUnspec, C.AF_UNSPEC}, "AF_INET": {AFInet, C.AF_INET}, "AF_INET6": {AFInet6, C.AF_INET6},
		"SOCK_STREAM": {SockStream, C.SOCK_STREAM}, "SOCK_DGRAM": {SockDgram, C.SOCK_DGRAM},
		"UV_EAI_ADDRFAMILY": {EAIAddrFamily, C.UV_EAI_ADDRFAMILY}, "UV_EAI_AGAIN": {EAIAgain, C.UV_EAI_AGAIN},
		"UV_EAI_BADFLAGS": {EAIBadFlags, C.UV_EAI_BADFLAGS}, "UV_EAI_CANCELED": {EAICanceled, C.UV_EAI_CANCELED},
		"UV_EAI_FAIL": {EAIFail, C.UV_EAI_FAIL}, "UV_EAI_FAMILY": {EAIFamily, C.UV_EAI_FAMILY},
		"UV_EAI_MEMORY": {EAIMemory, C.UV_EAI_MEMORY}, "UV_EAI_NODATA": {EAINoData, C.UV_EAI_NODATA},
		"UV_EAI_NONAME": {EAINoName, C.UV_EAI_NONAME}, "UV_EAI_OVERFLOW": {EAIOverflow, C.UV_EAI_OVERFLOW},
		"UV_EAI_SERVICE": {EAIService, C.UV_EAI_SERVICE}, "UV_EAI_SOCKTYPE": {EAISockType, C.UV_EAI_SOCKTYPE},
		"UV_EAI_BADHINTS": {EAIBadHints, C.UV_EAI_BADHINTS}, "UV_EAI_PROTOCOL": {EAIProtocol, C.UV_EAI_PROTOCOL},
	}
}
