package uv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// The I/O kinds' zero values (architecture §2, rule 11): every method of a
// zero IO, Listener, UDP, Poll, PollProxy and File refuses with an error
// matching event.ErrNilEvent, or gives a zero answer, and never
// dereferences nil nor touches a descriptor (a zero File's 0 is stdin).
func TestZeroValueIOKindsAreRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p := make([]byte, 8)
	dl := time.Now().Add(time.Hour)
	udpTo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	errOf := func(_ any, err error) error { return err }
	cases := map[string]func() error{
		"IO.Read":             func() error { return errOf(new(uv.IO).Read(p)) },
		"IO.ReadAsync":        func() error { return errOf(new(uv.IO).ReadAsync(8)) },
		"IO.Write":            func() error { return errOf(new(uv.IO).Write(p)) },
		"IO.Send":             func() error { return new(uv.IO).Send(p) },
		"IO.WriteAsync":       func() error { return errOf(new(uv.IO).WriteAsync(p)) },
		"IO.CloseWrite":       func() error { return new(uv.IO).CloseWrite() },
		"IO.SetDeadline":      func() error { return new(uv.IO).SetDeadline(dl) },
		"IO.SetReadDeadline":  func() error { return new(uv.IO).SetReadDeadline(dl) },
		"IO.SetWriteDeadline": func() error { return new(uv.IO).SetWriteDeadline(dl) },
		"IO.SetNoDelay":       func() error { return new(uv.IO).SetNoDelay(true) },
		"IO.SetMode":          func() error { return new(uv.IO).SetMode(uv.TTYRaw) },
		"IO.WindowSize":       func() error { _, _, err := new(uv.IO).WindowSize(); return err },
		"IO.Close":            func() error { return new(uv.IO).Close() },
		"Listener.AcceptIO":   func() error { return errOf(new(uv.Listener).AcceptIO(ctx)) },
		"Listener.Accept":     func() error { return errOf(new(uv.Listener).Accept()) },
		"Listener.Close":      func() error { return new(uv.Listener).Close() },
		"UDP.ReadFrom":        func() error { _, _, err := new(uv.UDP).ReadFrom(p); return err },
		"UDP.WriteTo":         func() error { return errOf(new(uv.UDP).WriteTo(p, udpTo)) },
		"UDP.SetDeadline":     func() error { return new(uv.UDP).SetDeadline(dl) },
		"UDP.SetReadDeadline": func() error { return new(uv.UDP).SetReadDeadline(dl) },
		"UDP.Close":           func() error { return new(uv.UDP).Close() },
		"Poll.Start":          func() error { return new(uv.Poll).Start() },
		"PollProxy.Start":     func() error { return new(uv.PollProxy).Start() },
		"File.ReadAt":         func() error { return errOf(new(uv.File).ReadAt(p, 0)) },
		"File.WriteAt":        func() error { return errOf(new(uv.File).WriteAt(p, 0)) },
		"File.Read":           func() error { return errOf(new(uv.File).Read(p)) },
		"File.Write":          func() error { return errOf(new(uv.File).Write(p)) },
		"File.ReadAsync":      func() error { return errOf(new(uv.File).ReadAsync(8, 0)) },
		"File.WriteAsync":     func() error { return errOf(new(uv.File).WriteAsync(p, 0)) },
		"File.Close":          func() error { return new(uv.File).Close() },
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if perr := callBounded(func() { err = fn() }); perr != nil {
				t.Fatalf("zero value: %v", perr)
			}
			if !errors.Is(err, event.ErrNilEvent) {
				t.Errorf("got %v, want an error matching event.ErrNilEvent", err)
			}
			if _, ferr := unix.FcntlInt(0, unix.F_GETFD, 0); ferr != nil {
				t.Fatalf("descriptor 0 was closed: %v", ferr)
			}
		})
	}
	answers := map[string]func() any{
		"IO.LocalAddr":    func() any { return new(uv.IO).LocalAddr() },
		"IO.RemoteAddr":   func() any { return new(uv.IO).RemoteAddr() },
		"IO.Queued":       func() any { return new(uv.IO).Queued() },
		"IO.Stats":        func() any { a, b, c := new(uv.IO).Stats(); return a + b + c },
		"Listener.Addr":   func() any { return new(uv.Listener).Addr() },
		"UDP.LocalAddr":   func() any { return new(uv.UDP).LocalAddr() },
		"UDP.Queued":      func() any { return new(uv.UDP).Queued() },
		"Poll.FD":         func() any { return new(uv.Poll).FD() },
		"File.Name":       func() any { return new(uv.File).Name() },
		"PollProxy.Info":  func() any { return new(uv.PollProxy).Info() },
		"IO.Info":         func() any { return new(uv.IO).Info() },
		"Listener.Info":   func() any { return new(uv.Listener).Info() },
		"UDP.Info":        func() any { return new(uv.UDP).Info() },
		"IOOf(nil event)": func() any { return uv.IOOf(nil) == nil },
	}
	for name, fn := range answers {
		t.Run(name, func(t *testing.T) {
			var got any
			if perr := callBounded(func() { got = fn() }); perr != nil {
				t.Fatalf("zero value: %v", perr)
			}
			t.Logf("%s = %v", name, fmt.Sprint(got))
		})
	}
}
