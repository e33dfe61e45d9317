package uv

// The libuv driver's file operations: uv_fs_* requests (internal/cgo/fs.c).

import (
	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// submit submits the operation to libuv, for the request of id.
func (op *fsOp) submit(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
	switch op.name {
	case "open":
		return l.FSOpen(id, op.path, op.flag, op.mode)
	case "read":
		return l.FSRead(id, op.fd, op.n, op.off)
	case "write":
		return l.FSWrite(id, op.fd, op.p, op.off)
	}
	return l.FSClose(id, op.fd)
}

func (q *FSRequest[T]) done(rec *uvcgo.Completion) (any, error) {
	if rec.Status < 0 {
		return nil, q.failure(int(rec.Status))
	}
	var res any = int(rec.N)
	switch q.op {
	case "read":
		res = append([]byte{}, rec.Bytes()...)
	case "open":
		uvcgo.Take(rec) // the descriptor is Go's from here on: fs.c closes one never taken
	}
	if q.Flags().Has(event.Closed) || !q.hold(res) {
		q.unclaimed(res) // reqCore.settle drops it
	}
	return res, nil
}

func (q *FSRequest[T]) cancel(req uvcgo.Request) { q.loop.CancelFS(req) }
