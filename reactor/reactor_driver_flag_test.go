package reactor_test

import (
	"flag"
	"io"
	"testing"

	"github.com/uvevent/uvevent/reactor"
)

// TestDriverFlag: a Driver is a flag.Value whose names are its String's,
// and an unknown name is refused, leaving the value as it was.
func TestDriverFlag(t *testing.T) {
	for _, want := range []reactor.Driver{reactor.DriverAuto, reactor.DriverLibuv, reactor.DriverGo} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := reactor.Driver(99)
		fs.Var(&d, "driver", "")
		if err := fs.Parse([]string{"-driver", want.String()}); err != nil || d != want {
			t.Errorf("-driver %s: got %v, %v; want %v", want, d, err, want)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d := reactor.DriverGo
	fs.Var(&d, "driver", "")
	if err := fs.Parse([]string{"-driver", "uring"}); err == nil || d != reactor.DriverGo {
		t.Errorf("-driver uring: got %v, %v; want an error and go kept", d, err)
	}
}
