package uvcgo

/*
#include <stdint.h>
*/
import "C"

// This file holds every entry from C into Go. Each one recovers, so that a
// Go panic never unwinds through libuv's C frames.

//export uvcgoProbeWoken
func uvcgoProbeWoken(p C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			probePanics.Add(1)
		}
	}()
	probeWoken(uintptr(p))
}
