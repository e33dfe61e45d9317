package uvcgo

// This file holds the constants and types of the poll, fs event and dns
// kinds in pure Go, with the values of libuv and the C library on Linux,
// so that packages above can use them in builds without cgo too. Files
// that import "C" hold only functions (TestConstantsMatchC checks the
// values against C).

// The poll events libuv reports (UV_READABLE, ...).
const (
	PollReadable    = 1
	PollWritable    = 2
	PollDisconnect  = 4
	PollPrioritized = 8
)

// The fs event bits (UV_RENAME, UV_CHANGE), the mark of a child watch's
// record, and of a child's record about its directory itself rather than a
// file in it (fsevent.h).
const (
	FSEventRename = 1
	FSEventChange = 2
	FSEventChild  = 1 << 16
	FSEventSelf   = 1 << 17
)

// getaddrinfo and getnameinfo flags, address families and socket types of
// the C library.
const (
	AIPassive     = 0x1
	AINumericHost = 0x4
	AINumericServ = 0x400

	NINumericHost = 1
	NINumericServ = 2
	NINoFQDN      = 4
	NINameReqd    = 8
	NIDgram       = 16

	AFUnspec = 0
	AFInet   = 2
	AFInet6  = 10

	SockStream = 1
	SockDgram  = 2
)

// libuv's getaddrinfo error codes (UV_EAI_*), one for each EAI_* of the C
// library.
const (
	EAIAddrFamily = -3000
	EAIAgain      = -3001
	EAIBadFlags   = -3002
	EAICanceled   = -3003
	EAIFail       = -3004
	EAIFamily     = -3005
	EAIMemory     = -3006
	EAINoData     = -3007
	EAINoName     = -3008
	EAIOverflow   = -3009
	EAIService    = -3010
	EAISockType   = -3011
	EAIBadHints   = -3013
	EAIProtocol   = -3014
)
