package uv_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uvevent/uvevent/uv"
)

// netnsEnv marks the test binary re-executed inside a private network
// namespace by inNetNS.
const netnsEnv = "UVEVENT_TEST_NETNS"

// inNetNS runs the test named by t again in a private network namespace
// whose loopback is up with the MULTICAST flag (unshare -n, then ip link),
// so multicast can be tested on loopback only and without touching the
// host's interfaces (whose loopback has no MULTICAST flag). It returns true
// inside the namespace, where the caller goes on; outside it runs the
// child, fails t with the child's output if the child failed, and returns
// false. Where namespaces are not permitted (no unshare or ip, no
// CAP_SYS_ADMIN) the test is skipped with the reason.
func inNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == "1" {
		return true
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("multicast needs a private network namespace: %s not found: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		t.Skipf("multicast needs a private network namespace, not permitted here: unshare -n: %v: %s", err, out)
	}
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up multicast on && exec "$@"`, "sh",
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a private network namespace: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("in a private network namespace:\n%s", out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test did not pass in the namespace:\n%s", out)
	}
	return false
}

// readOne reads u's next datagram as a string and its sender.
func readOne(t *testing.T, u *uv.UDP) (string, string) {
	t.Helper()
	buf := make([]byte, 100)
	n, from, err := u.ReadFrom(buf)
	if err != nil {
		t.Fatalf("ReadFrom: %v", err)
	}
	return string(buf[:n]), from.String()
}

// TestUDPMulticast: in a private network namespace, on loopback, on both
// drivers: a socket that joined a group receives what is
// sent to it (from a sender that chose loopback with
// SetMulticastInterface), and no longer after LeaveGroup; a
// source-specific join receives from that source only. (Multicast
// loopback cannot be seen here: a datagram sent out of the loopback
// interface comes back whatever IP_MULTICAST_LOOP says; TestUDPOptions
// reads the option back.) IPv6 multicast is not delivered on loopback, so
// for IPv6 the joins and leaves are checked, not the datagrams. What must not
// arrive is checked by a unicast datagram sent after it, which arrives
// first. Skipped, with the reason, where namespaces are not permitted.
func TestUDPMulticast(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	lo, err := net.InterfaceByName("lo")
	uv.UvtMust(t, err)
	for _, fam := range []struct {
		network, any, host, other string
		group, ssmGroup           string
	}{
		{"udp4", "0.0.0.0", "127.0.0.1", "127.0.0.2", "239.1.2.3", "232.1.2.3"},
		{"udp6", "::", "::1", "", "ff12::1:3", "ff32::8000:3"},
	} {
		t.Run(fam.network, func(t *testing.T) {
			uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
				stop := uv.UvtServe(t, u)
				defer func() {
					stop()
					uv.UvtShutdown(t, u, false)
				}()
				listen := func(host string) *uv.UDP {
					x, err := uv.ListenUDP(u.Reactor, fam.network, net.JoinHostPort(host, "0"))
					uv.UvtMust(t, err)
					uv.UvtMust(t, x.SetReadDeadline(time.Now().Add(uv.UvtSafety)))
					t.Cleanup(func() { x.Close() })
					return x
				}
				recv, send := listen(fam.any), listen(fam.host)
				uv.UvtMust(t, send.SetMulticastInterface(lo))
				port := recv.LocalAddr().(*net.UDPAddr).Port
				to := func(ip string) *net.UDPAddr {
					a := &net.UDPAddr{IP: net.ParseIP(ip), Port: port}
					if a.IP.To4() == nil && a.IP.IsMulticast() {
						a.Zone = "lo"
					}
					return a
				}
				sendTo := func(from *uv.UDP, p, ip string) {
					t.Helper()
					if _, err := from.WriteTo([]byte(p), to(ip)); err != nil {
						t.Fatalf("WriteTo(%q, %s): %v", p, ip, err)
					}
				}
				expect := func(what, want string) {
					t.Helper()
					if got, from := readOne(t, recv); got != want {
						t.Errorf("%s: received %q from %s, want %q", what, got, from, want)
					}
				}

				uv.UvtMust(t, recv.JoinGroup(lo, net.ParseIP(fam.group)))
				if err := recv.JoinGroup(lo, net.ParseIP(fam.group)); !errors.Is(err, syscall.EADDRINUSE) {
					t.Errorf("JoinGroup twice = %v, want EADDRINUSE", err)
				}
				if fam.network == "udp6" {
					// Linux delivers no IPv6 multicast on a loopback
					// interface, and the tests use loopback only: the calls
					// are checked, not the datagrams.
					t.Log("IPv6: joins and leaves checked; delivery is not (no IPv6 multicast on loopback)")
					uv.UvtMust(t, recv.LeaveGroup(lo, net.ParseIP(fam.group)))
					if err := recv.LeaveGroup(lo, net.ParseIP(fam.group)); !errors.Is(err, syscall.EADDRNOTAVAIL) {
						t.Errorf("LeaveGroup not joined = %v, want EADDRNOTAVAIL", err)
					}
					uv.UvtMust(t, recv.JoinSourceSpecificGroup(lo, net.ParseIP(fam.ssmGroup), net.ParseIP(fam.host)))
					uv.UvtMust(t, recv.LeaveSourceSpecificGroup(lo, net.ParseIP(fam.ssmGroup), net.ParseIP(fam.host)))
					return
				}
				sendTo(send, "to the group", fam.group)
				expect("joined", "to the group")

				uv.UvtMust(t, recv.LeaveGroup(lo, net.ParseIP(fam.group)))
				sendTo(send, "after leaving", fam.group)
				sendTo(send, "marker 2", fam.host)
				expect("left", "marker 2")

				uv.UvtMust(t, recv.JoinSourceSpecificGroup(lo, net.ParseIP(fam.ssmGroup), net.ParseIP(fam.host)))
				sendTo(send, "from the source", fam.ssmGroup)
				expect("source-specific, from the source", "from the source")
				if fam.other != "" {
					other := listen(fam.other)
					uv.UvtMust(t, other.SetMulticastInterface(lo))
					sendTo(other, "from another source", fam.ssmGroup)
					sendTo(send, "marker 2", fam.host)
					expect("source-specific, from another", "marker 2")
				}
				uv.UvtMust(t, recv.LeaveSourceSpecificGroup(lo, net.ParseIP(fam.ssmGroup), net.ParseIP(fam.host)))
				sendTo(send, "source left", fam.ssmGroup)
				sendTo(send, "marker 3", fam.host)
				expect("source-specific, left", "marker 3")
			})
		})
	}
}
