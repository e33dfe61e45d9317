//go:build uvfaults && cgo

package uv_test

import (
	"github.com/uvevent/uvevent/uv"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

func init() {
	fireLinger = func(c *uv.IO) bool {
		g := uv.UvtLingerOf(c)
		if g != 0 {
			uvcgo.FireLinger(g)
		}
		return g != 0
	}
}
