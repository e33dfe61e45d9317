//go:build uvfaults && cgo

package uv_test

import (
	"syscall"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

func init() {
	injectInitFault = func(errno syscall.Errno) { uvcgo.InjectFault(uvcgo.FaultInit, int(errno)) }
}
