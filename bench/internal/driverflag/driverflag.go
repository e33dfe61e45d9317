// Package driverflag is the -driver flag the benchmark programs share, and
// the name their result lines give each driver.
package driverflag

import (
	"flag"

	"github.com/uvevent/uvevent/reactor"
)

// Var defines -driver (libuv by default, or go) on the command line's flag
// set and returns where its value goes.
func Var() *reactor.Driver {
	d := reactor.DriverLibuv
	flag.Var(&d, "driver", "the reactor's driver: libuv or go")
	return &d
}

// Impl is the implementation's name in a result line: "uvevent" for the
// libuv driver, "uvevent-go" for the pure-Go one.
func Impl(d reactor.Driver) string {
	if d == reactor.DriverGo {
		return "uvevent-go"
	}
	return "uvevent"
}
