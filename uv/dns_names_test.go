package uv_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
)

// TestAddrInfoInvalidNameRefused: a host no DNS name can be (longer than
// 253 bytes, a trailing dot aside, or with a label longer than 63) is
// refused at once by NewAddrInfo with the same error on both drivers, one
// matching syscall.EINVAL that names the host; nothing is looked up. (The
// libuv driver's getaddrinfo said EINVAL later for some, Go's resolver
// EAI_NONAME for them.) A name at the limits is looked up.
func TestAddrInfoInvalidNameRefused(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".") // 253 bytes
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		for _, host := range []string{
			name253 + "c",                    // 254 bytes
			name253 + "c.",                   // 254 bytes and the root's dot
			strings.Repeat("a", 300),         // one label of 300 bytes
			"x." + label63 + "a.example",     // a label of 64
			label63 + "a",                    // a label of 64, alone
			strings.Repeat("a.", 127) + "aa", // 256 bytes of short labels
		} {
			a, err := uv.NewAddrInfo(u.Reactor, host, "", uv.AddrInfoHints{})
			if a != nil || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), host) {
				t.Errorf("NewAddrInfo(%d bytes) = %v, %v; want EINVAL naming the host", len(host), a, err)
			}
		}
		if s := u.Stats(); len(s.Handles) != 0 || s.Active != 0 {
			t.Errorf("refused lookups left %v, active %d", s.Handles, s.Active)
		}
		for _, host := range []string{name253, name253 + "."} {
			a, err := uv.NewAddrInfo(u.Reactor, host, "", uv.AddrInfoHints{})
			if err != nil {
				t.Errorf("NewAddrInfo of a %d-byte name = %v, want a lookup", len(host), err)
				continue
			}
			uv.UvtMust(t, a.Close())
		}
		uv.UvtShutdown(t, u, false)
	})
}
