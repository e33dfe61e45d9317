// Current for amd64: the goroutine descriptor lives in thread-local storage.

#include "textflag.h"

TEXT ·current(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
