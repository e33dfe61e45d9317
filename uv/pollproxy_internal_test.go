package uv

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/uvevent/uvevent/eventkind"
	"golang.org/x/sys/unix"
)

// The proxy rules as a table: the handle's mask is the union of the
// started proxies' events; a readiness reaches the proxies it matches with
// triggered & events; a disconnect or an error reaches them all.
func TestPollProxyMaskAndDispatch(t *testing.T) {
	errBoom := errors.New("boom")
	type out struct {
		Told bool
		D    proxyDelivery
	}
	for _, tc := range []struct {
		name      string
		proxies   []PollEvents // the started proxies' events
		triggered PollEvents
		err       error
		mask      PollEvents
		want      []out
	}{
		{"none started", nil, Readable, nil, 0, nil},
		{"reader and writer, readable", []PollEvents{Readable, Writable}, Readable, nil, Readable | Writable,
			[]out{{true, proxyDelivery{Readable, nil}}, {}}},
		{"reader and writer, both", []PollEvents{Readable, Writable}, Readable | Writable, nil, Readable | Writable,
			[]out{{true, proxyDelivery{Readable, nil}}, {true, proxyDelivery{Writable, nil}}}},
		{"rw proxy sees only what fired", []PollEvents{Readable | Writable, Readable}, Writable, nil, Readable | Writable,
			[]out{{true, proxyDelivery{Writable, nil}}, {}}},
		{"prioritized to its proxy only", []PollEvents{Readable, Prioritized}, Prioritized, nil, Readable | Prioritized,
			[]out{{}, {true, proxyDelivery{Prioritized, nil}}}},
		{"disconnect reaches all with their full set", []PollEvents{Readable | Disconnect, Writable}, Readable | Disconnect, nil,
			Readable | Writable | Disconnect,
			[]out{{true, proxyDelivery{Readable | Disconnect, nil}}, {true, proxyDelivery{Writable | Disconnect, nil}}}},
		{"error reaches all", []PollEvents{Readable, Writable}, 0, errBoom, Readable | Writable,
			[]out{{true, proxyDelivery{Readable, errBoom}}, {true, proxyDelivery{Writable, errBoom}}}},
		{"nothing matches", []PollEvents{Writable}, Readable, nil, Writable, []out{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var started []*PollProxy
			for _, ev := range tc.proxies {
				started = append(started, &PollProxy{events: ev})
			}
			if got := proxyMask(started); got != tc.mask {
				t.Errorf("mask = %v, want %v", got, tc.mask)
			}
			var got []out
			for _, p := range started {
				d, told := proxyOutcome(p.events, tc.triggered, tc.err)
				got = append(got, out{told, d})
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("deliveries (-want +got):\n%s", diff)
			}
		})
	}
}

// libuv's statuses as poll results: POLLERR (UV_EBADF) is a disconnect,
// anything else an error.
func TestPollOutcome(t *testing.T) {
	for _, tc := range []struct {
		status  int32
		events  int64
		want    PollEvents
		wantErr error
	}{
		{0, int64(Readable | Writable), Readable | Writable, nil},
		{-int32(syscall.EBADF), 0, Disconnect, nil},
		{-int32(syscall.EINVAL), 0, 0, syscall.EINVAL},
	} {
		got, err := pollOutcome(tc.status, tc.events)
		if got != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
			t.Errorf("pollOutcome(%d, %d) = %v, %v; want %v, %v", tc.status, tc.events, got, err, tc.want, tc.wantErr)
		}
	}
}

// The peek that drops a spurious readiness: no data is spurious, data or
// the end of file is not.
func TestPollPeek(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	e := &pollState{fd: fds[0]}
	if !e.nothingToRead() {
		t.Error("an empty socket reads as ready")
	}
	unix.Write(fds[1], []byte("x"))
	if e.nothingToRead() {
		t.Error("a socket with data reads as spurious")
	}
	var b [1]byte
	unix.Read(fds[0], b[:])
	unix.Close(fds[1])
	if e.nothingToRead() {
		t.Error("a socket at end of file reads as spurious")
	}
}

// A Stop of a poll that only its proxies started takes the proxies' Start
// away: the started proxy is then polled for nothing and never told again.
// The poll watches the union of what its own Start and its started proxies
// ask for; a Stop takes away only the poll's own part.
func TestPollStopByNonStarterLeavesProxies(t *testing.T) {
	UvtEachDriver(t, func(t *testing.T, u *UvtReactor) {
		r := u.Reactor
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPoll(r, fds[0], Readable, PollOptions{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := NewPollProxy(p, Readable)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
		p.Stop()
		var polling PollEvents
		r.Call(func() { polling = p.e.polling })
		if polling != Readable || eventkind.LoopRefs(x) != 1 {
			t.Errorf("after the poll's Stop, a started proxy's poll polls for %v, want %v", polling, Readable)
		}
		r.Close()
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
}
