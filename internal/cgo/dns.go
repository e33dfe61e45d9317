package uvcgo

/*
#include <netdb.h>
#include <sys/socket.h>
#include <uv.h>
#include "fsevent.h"
*/
import "C"

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
