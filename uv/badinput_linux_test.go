package uv_test

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/uv"
	"golang.org/x/sys/unix"
)

// checkBacklog checks that ln, a TCP listener on 127.0.0.1, was given the
// system's maximum backlog (/proc/sys/net/core/somaxconn): the kernel's
// sock_diag tells a listening socket's backlog (inet_diag_msg's
// idiag_wqueue; idiag_rqueue is the connections waiting).
func checkBacklog(t *testing.T, ln net.Listener) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	uv.UvtMust(t, err)
	want, err := strconv.Atoi(strings.TrimSpace(string(b)))
	uv.UvtMust(t, err)
	_, got, err := listenQueues(ln.Addr().(*net.TCPAddr))
	uv.UvtMust(t, err)
	if got != want {
		t.Errorf("backlog of a listener made with a negative Backlog = %d, want somaxconn (%d)", got, want)
	}
}

// tcpListen is TCP_LISTEN of the kernel's socket states.
const tcpListen = 10

// listenQueues asks the kernel's sock_diag, over netlink, for the
// connections waiting to be accepted by the IPv4 TCP socket listening on
// addr, and for its backlog.
func listenQueues(addr *net.TCPAddr) (waiting, backlog int, err error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, 0, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	// struct nlmsghdr (16 bytes), then struct inet_diag_req_v2 (56): the
	// family, the protocol, no extensions, the states asked for (listening
	// only), and a socket id left zero (every socket, filtered below).
	const hdr, reqLen = unix.SizeofNlMsghdr, 56
	req := make([]byte, hdr+reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], 1) // sequence
	req[hdr+0] = unix.AF_INET
	req[hdr+1] = unix.IPPROTO_TCP
	ne.PutUint32(req[hdr+4:], 1<<tcpListen)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, 0, os.NewSyscallError("sendto", err)
	}
	ip := addr.IP.To4()
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, 0, os.NewSyscallError("recvfrom", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, 0, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return 0, 0, os.NewSyscallError("sock_diag", unix.ENOENT)
			case unix.NLMSG_ERROR:
				return 0, 0, os.NewSyscallError("sock_diag", unix.Errno(-int32(ne.Uint32(m.Data))))
			}
			// struct inet_diag_msg: family, state, timer, retrans, then
			// the socket id (sport and dport big-endian, src and dst 16
			// bytes each, ...) from byte 4, idiag_rqueue at byte 56,
			// idiag_wqueue at 60.
			d := m.Data
			if len(d) < 64 {
				continue
			}
			port := int(binary.BigEndian.Uint16(d[4:]))
			if port == addr.Port && net.IP(d[8:12]).Equal(ip) {
				return int(ne.Uint32(d[56:])), int(ne.Uint32(d[60:])), nil
			}
		}
	}
}
