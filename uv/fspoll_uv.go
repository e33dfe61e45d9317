package uv

// The libuv driver's fs poll: a uv_fs_poll_t (internal/cgo/fspoll.c).

import (
	"github.com/uvevent/uvevent/eventkind"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// fsPollEvent is the libuv driver's poll; libuv compares the stats and
// calls back only for a change or a new error.
type fsPollEvent struct {
	core
	fsPollState
}

func (e *fsPollEvent) closing() {}

func (e *fsPollEvent) arm() error {
	return e.loop.StartFSPoll(e.h, e.path, uint32(e.interval.Milliseconds()))
}

func (e *fsPollEvent) disarm() { e.loop.StopFSPoll(e.h) }

func (e *fsPollEvent) completed(rec *uvcgo.Completion) {
	prev, curr, _ := uvcgo.FSPollWords(rec)
	res := FSPollResult{Prev: e.info(statOfWords(prev))}
	if rec.Status < 0 {
		eventkind.Notify(&e.Base, res, e.failure(int(rec.Status)))
		return
	}
	res.Curr = e.info(statOfWords(curr))
	eventkind.Notify(&e.Base, res, nil)
}
