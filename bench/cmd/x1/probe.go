package main

/*
#cgo pkg-config: libuv-static
#cgo LDFLAGS: -lpthread -ldl -lrt
#include "probe.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// This file is driving mode (a), measured beside the reactor by X1. It lives
// here, not in the library's shim: no user of uvevent drives a loop this way.

// Probe is driving mode (a), kept to measure it beside the reactor's mode:
// a loop that blocks in uv_run(UV_RUN_DEFAULT) on a locked OS thread and is
// woken by uv_async_send; each wake-up calls Go from the loop thread, which
// hands the result to the waiting goroutine over a channel.
type Probe struct {
	p     uintptr
	woken chan struct{}
	done  chan struct{}
}

var (
	probes      sync.Map // uintptr → *Probe
	probePanics atomic.Int64
)

// NewProbe starts a probe loop on its own locked OS thread.
func NewProbe() (*Probe, error) {
	var p C.uintptr_t
	if rc := C.uvev_probe_new(&p); rc != 0 {
		return nil, fmt.Errorf("uv_loop_init: %d", int(rc))
	}
	pr := &Probe{p: uintptr(p), woken: make(chan struct{}, 1), done: make(chan struct{})}
	probes.Store(pr.p, pr)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		C.uvev_probe_run(C.uintptr_t(pr.p))
		close(pr.done)
	}()
	return pr, nil
}

func probeWoken(p uintptr) {
	if v, ok := probes.Load(p); ok {
		select {
		case v.(*Probe).woken <- struct{}{}:
		default:
		}
	}
}

// RoundTrip wakes the loop and waits until its callback answered.
func (p *Probe) RoundTrip() {
	C.uvev_probe_send(C.uintptr_t(p.p))
	<-p.woken
}

// Close stops the loop and waits for its thread to end.
func (p *Probe) Close() {
	C.uvev_probe_stop(C.uintptr_t(p.p))
	<-p.done
	probes.Delete(p.p)
}

// uvcgoProbeWoken is the one entry from C into Go; it recovers, so that a Go
// panic never unwinds through libuv's C frames.
//
//export uvcgoProbeWoken
func uvcgoProbeWoken(p C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			probePanics.Add(1)
		}
	}()
	probeWoken(uintptr(p))
}
