package uv

// The libuv driver's fs event: uv_fs_event_t handles (internal/cgo/fsevent.c).

import (
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// fsEvent is the libuv driver's watch: a uv_fs_event_t for the path, and
// one more per directory below it for a recursive watch.
type fsEvent struct {
	core
	fsState
}

func (e *fsEvent) kindName() string            { return "fsevent" }
func (e *fsEvent) reactorOf() *reactor.Reactor { return e.r }
func (e *fsEvent) notify(res any, err error)   { eventkind.Notify(&e.Base, res, err) }

func (e *fsEvent) watchRoot() error { return e.loop.StartFSEvent(e.h, e.path) }

func (e *fsEvent) unwatchRoot() {
	if e.h != 0 {
		e.loop.StopFSEvent(e.h)
	}
}

func (e *fsEvent) watchChild(path string) (func(), error) {
	h, err := e.loop.NewFSEventChild(uint64(e.id), path)
	if err != nil {
		return nil, err
	}
	return func() { e.loop.CloseFSEventChild(h) }, nil
}

// closing drops the child watches before the kit closes the root.
func (e *fsEvent) closing() { e.unwatch("") }

func (e *fsEvent) completed(rec *uvcgo.Completion) {
	if rec.Status != 0 {
		e.notify(nil, watchError(e.path, uvcgo.ErrorOf("uv_fs_event", int(rec.Status))))
		return
	}
	e.reported(string(rec.Bytes()), FSEvents(rec.Aux)&(Rename|Change), rec.Aux&uvcgo.FSEventChild != 0, rec.Aux&uvcgo.FSEventSelf != 0)
}
