package uvcgo

/*
#include "uvev.h"
#include "phase.h"
#include "stream.h"
*/
import "C"

func init() {
	errName = func(code int) string { return errString(code, false) }
	errText = func(code int) string { return errString(code, true) }
}

// errString is libuv's name (or message) for code through the _r calls,
// which write into a buffer: uv_err_name and uv_strerror allocate a string
// for a code libuv does not know, and never free it.
func errString(code int, text bool) string {
	var buf [128]C.char
	if text {
		C.uv_strerror_r(C.int(code), &buf[0], C.size_t(len(buf)))
	} else {
		C.uv_err_name_r(C.int(code), &buf[0], C.size_t(len(buf)))
	}
	return C.GoString(&buf[0])
}

// Version returns the version of the libuv linked in.
func Version() string { return C.GoString(C.uv_version_string()) }

// cConstants gives the C values of the constants types.go mirrors, for the
// test that keeps the two in step.
func cConstants() map[string][2]int {
	return map[string][2]int{
		"CLOSED": {CompletionClosed, C.UVEV_DONE_CLOSED}, "ASYNC": {CompletionAsync, C.UVEV_DONE_ASYNC},
		"TIMER": {CompletionTimer, C.UVEV_DONE_TIMER}, "WORK": {CompletionWork, C.UVEV_DONE_WORK},
		"POLL": {CompletionPoll, C.UVEV_DONE_POLL}, "READ": {CompletionRead, C.UVEV_DONE_READ},
		"WRITE": {CompletionWrite, C.UVEV_DONE_WRITE}, "CONNECT": {CompletionConnect, C.UVEV_DONE_CONNECT},
		"CONNECTION": {CompletionConnection, C.UVEV_DONE_CONNECTION}, "SHUTDOWN": {CompletionShutdown, C.UVEV_DONE_SHUTDOWN},
		"FSEVENT":  {CompletionFSEvent, C.UVEV_DONE_FSEVENT},
		"UDP_RECV": {CompletionUDPRecv, C.UVEV_DONE_UDP_RECV},
		"UDP_SEND": {CompletionUDPSend, C.UVEV_DONE_UDP_SEND}, "FS": {CompletionFS, C.UVEV_DONE_FS},
		"PHASE": {CompletionPhase, C.UVEV_DONE_PHASE}, "FSPOLL": {CompletionFSPoll, C.UVEV_DONE_FSPOLL},
		"HANDLE": {CompletionHandle, C.UVEV_DONE_HANDLE}, "LINGER_RESET": {LingerReset, C.UVEV_LINGER_RESET},
		"UV_NAMED_PIPE": {HandleTypePipe, C.UV_NAMED_PIPE}, "UV_TCP": {HandleTypeTCP, C.UV_TCP},
		"PHASE_PREPARE": {int(PhasePrepare), C.UVEV_PHASE_PREPARE}, "PHASE_CHECK": {int(PhaseCheck), C.UVEV_PHASE_CHECK},
		"PHASE_IDLE": {int(PhaseIdle), C.UVEV_PHASE_IDLE},
		"READ_BUF":   {ReadBufferSize, C.UVEV_READ_BUF}, "UV_EOF": {EOF, C.UV_EOF},
		"UV_EAGAIN": {EAGAIN, C.UV_EAGAIN}, "UV_ECANCELED": {ECANCELED, C.UV_ECANCELED},
		"TTY_NORMAL": {TTYModeNormal, C.UV_TTY_MODE_NORMAL}, "TTY_RAW": {TTYModeRaw, C.UV_TTY_MODE_RAW},
		"TTY_IO":         {TTYModeIO, C.UV_TTY_MODE_IO},
		"DIRENT_UNKNOWN": {DirentUnknown, C.UV_DIRENT_UNKNOWN}, "DIRENT_FILE": {DirentFile, C.UV_DIRENT_FILE},
		"DIRENT_DIR": {DirentDir, C.UV_DIRENT_DIR}, "DIRENT_LINK": {DirentLink, C.UV_DIRENT_LINK},
		"DIRENT_FIFO": {DirentFIFO, C.UV_DIRENT_FIFO}, "DIRENT_SOCKET": {DirentSocket, C.UV_DIRENT_SOCKET},
		"DIRENT_CHAR": {DirentChar, C.UV_DIRENT_CHAR}, "DIRENT_BLOCK": {DirentBlock, C.UV_DIRENT_BLOCK},
	}
}
