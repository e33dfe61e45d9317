package uv_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// The conformance rows of poll, poll proxy, fs event and the dns requests.
// Polls watch an eventfd they own (CloseFD), which Fire makes readable.

// eventfdPoll makes a poll that owns a fresh eventfd.
func eventfdPoll(r *reactor.Reactor) (*uv.Poll, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, err
	}
	p, err := uv.NewPoll(r, fd, uv.Readable, uv.CloseFD())
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return p, nil
}

// fireEventfd makes the eventfd behind a poll readable.
func fireEventfd(p *uv.Poll) error {
	_, err := unix.Write(p.FD(), []byte{1, 0, 0, 0, 0, 0, 0, 0})
	return err
}

func TestConformPoll(t *testing.T) {
	conform.Run(t, conform.Kind{
		Name: "poll",
		New:  func(r *reactor.Reactor) (event.Event, error) { return eventfdPoll(r) },
		Fire: func(ev event.Event) error { return fireEventfd(ev.(*uv.Poll)) },
		Info: regexp.MustCompile(`^Poll\(fd=\d+, events=r\)$`),
	})
}

func TestConformPollProxy(t *testing.T) {
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			p, err := eventfdPoll(r)
			if err != nil {
				return nil, err
			}
			return uv.NewPollProxy(p, uv.Readable)
		},
		Fire: func(ev event.Event) error { return fireEventfd(ev.(*uv.PollProxy).Poll()) },
		Info: regexp.MustCompile(`^PollProxy\(fd=\d+, events=r\)$`),
	})
}

func TestConformFSEvent(t *testing.T) {
	root := t.TempDir()
	var n atomic.Int64
	conform.Run(t, conform.Kind{
		Name: "fsevent",
		New: func(r *reactor.Reactor) (event.Event, error) {
			dir := filepath.Join(root, strconv.FormatInt(n.Add(1), 10))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			return uv.NewFSEvent(r, dir)
		},
		Fire: func(ev event.Event) error {
			return os.WriteFile(filepath.Join(ev.(*uv.FSEvent).Path(), "f"), nil, 0o600)
		},
		Info: regexp.MustCompile(`^FSEvent\(path=".+"\)$`),
	})
}

func TestConformAddrInfo(t *testing.T) {
	g := newGatedResolver(t)
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return gate[*uv.AddrInfo](g, r)(uv.NewAddrInfo(r, "localhost", "", uv.AddrInfoHints{}))
		},
		Fire:    g.fire,
		Info:    regexp.MustCompile(`^AddrInfo\(host="localhost", service="", network=ip, (pending|closed|addrs=\d+)\)$`),
		OneShot: true,
		NoStart: true,
	})
}

func TestConformNameInfo(t *testing.T) {
	g := newGatedResolver(t)
	conform.Run(t, conform.Kind{
		New: func(r *reactor.Reactor) (event.Event, error) {
			return gate[*uv.NameInfo](g, r)(uv.NewNameInfo(r, netip.MustParseAddrPort("127.0.0.1:80"), uv.NameInfoHints{}))
		},
		Fire:    g.fire,
		Info:    regexp.MustCompile(`^NameInfo\(addr=127\.0\.0\.1:80, (pending|closed|host=".*", service=".*")\)$`),
		OneShot: true,
		NoStart: true,
	})
}
