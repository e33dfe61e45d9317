package reactor

import (
	"io"
	"os"
	"runtime"
	"sync"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
)

// A reactor dropped without Close (never run, or run and stopped) is freed
// by the collector: its C loop with the handles left in it, the watcher's
// descriptor and goroutine. Nothing long-lived may keep the Reactor
// reachable for that: the watcher goroutine holds only the channels and the
// ready flag, never the Reactor.

// dropped is what the cleanup of a dropped reactor frees. It is reachable
// from the Reactor, never the other way round.
type dropped struct {
	mu      sync.Mutex
	closed  bool // Close freed everything: nothing to do
	loop    *uvcgo.Loop
	backend *os.File               // the watcher's descriptor, once it runs
	rearm   chan struct{}          // closed to end the watcher
	files   map[io.Closer]struct{} // closed before the loop is freed (kind.Host.KeepFile)
}

// KeepFile implements kind.Host. The keeper is the dropped-reactor
// record, which does not hold the reactor.
func (h *host) KeepFile(f io.Closer) kind.FileKeeper {
	d := h.drop
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.files == nil {
		d.files = map[io.Closer]struct{}{}
	}
	d.files[f] = struct{}{}
	return d
}

// ForgetFile implements kind.FileKeeper.
func (d *dropped) ForgetFile(f io.Closer) {
	d.mu.Lock()
	delete(d.files, f)
	d.mu.Unlock()
}

// trackDrop registers the cleanup; New calls it.
func (r *Reactor) trackDrop() {
	r.drop = &dropped{loop: r.loop}
	runtime.AddCleanup(r, (*dropped).free, r.drop)
}

// watcherStarted records the watcher's descriptor and channel.
func (d *dropped) watcherStarted(backend *os.File, rearm chan struct{}) {
	d.mu.Lock()
	d.backend, d.rearm = backend, rearm
	d.mu.Unlock()
}

// closedByClose records that Close freed everything.
func (d *dropped) closedByClose() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// free runs once the Reactor is unreachable: nobody can touch the loop any
// more, so it is freed here, on the runtime's cleanup goroutine.
func (d *dropped) free() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	files := d.files
	d.files = nil
	d.mu.Unlock()
	// Closed without the lock: a file's Close may forget itself (an
	// accepted connection's socket unopened in libuv does).
	for f := range files {
		f.Close() // before libuv closes the descriptors they duplicate: the sockets end now (or the sockets libuv never had)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.backend != nil {
		d.backend.Close()
		close(d.rearm) // the watcher sees the closed descriptor and ends
	}
	if d.loop != nil {
		d.loop.Abandon()
	}
}
