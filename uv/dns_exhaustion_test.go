package uv_test

import (
	"errors"
	"net/netip"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/uv"
)

// exhaustDescriptors lowers the soft descriptor limit and opens descriptors
// until the process has none left, then gives them back and restores the
// limit when the test ends (fill and restore: no child process needed).
func exhaustDescriptors(t *testing.T) (release func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 512
	if low.Cur > old.Max {
		t.Skipf("hard descriptor limit %d below 512: cannot lower the soft limit for the test", old.Max)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var fds []int
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restoring RLIMIT_NOFILE: %v", err)
		}
	}
	t.Cleanup(release)
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EMFILE) {
			return release
		}
		if err != nil {
			release()
			t.Fatalf("filling descriptors: %v", err)
		}
		fds = append(fds, fd)
	}
}

// A lookup that fails because the process has no descriptor left says so
// (EMFILE), on both drivers, rather than EAI_NONAME, a lie about the name.
func TestLookupUnderDescriptorExhaustionSaysEMFILE(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		ctx := waitCtx(t)
		release := exhaustDescriptors(t)
		a, aerr := uv.NewAddrInfo(u.Reactor, "localhost", "", uv.AddrInfoHints{})
		var addrs []netip.AddrPort
		if aerr == nil {
			addrs, aerr = a.Await(ctx)
		}
		n, nerr := uv.NewNameInfo(u.Reactor, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{NameRequired: true})
		if nerr == nil {
			_, nerr = n.Await(ctx)
		}
		release()
		if aerr == nil {
			t.Logf("AddrInfo(localhost) succeeded without a descriptor: %v", addrs)
		} else if !errors.Is(aerr, syscall.EMFILE) || errors.Is(aerr, uv.ErrNoName) {
			t.Errorf("AddrInfo(localhost) without descriptors = %v, want EMFILE, not EAI_NONAME", aerr)
		}
		if nerr != nil && (!errors.Is(nerr, syscall.EMFILE) || errors.Is(nerr, uv.ErrNoName)) {
			t.Errorf("NameInfo(127.0.0.1) without descriptors = %v, want EMFILE, not EAI_NONAME", nerr)
		}
	})
}
