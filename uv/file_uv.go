package uv

// The libuv driver's file system requests: uv_fs_* requests
// (internal/cgo/fs.c), all submitted through uvcgo's one call.

import (
	"syscall"

	"github.com/uvevent/uvevent/event"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// submit submits the operation to libuv, for the request of id.
func (op *fsOp) submit(l *uvcgo.Loop, id uint64) (uvcgo.Request, error) {
	return l.FS(id, &op.FSArgs)
}

// done turns the request's record into its result: the same Go values the
// pure-Go driver's run gives, through the same conversions (fsResult).
func (q *FSRequest[T]) done(rec *uvcgo.Completion) (any, error) {
	q.giveBack() // the pool is done with the descriptor
	if rec.Status < 0 {
		return nil, q.failure(int(rec.Status))
	}
	var res any = int(rec.N)
	switch q.op {
	case "read":
		res = append([]byte{}, rec.Bytes()...)
	case "open":
		uvcgo.Take(rec) // the descriptor is Go's from here on: fs.c closes one never taken
	case "stat", "lstat", "fstat":
		w, ok := uvcgo.FSStatWords(rec)
		if !ok {
			return nil, q.failure(-int(syscall.EIO))
		}
		res = statOfWords(w)
	case "statfs":
		w, _ := uvcgo.FSStatFSWords(rec)
		res = StatFS{Type: w[0], BlockSize: w[1], Blocks: w[2], BlocksFree: w[3], BlocksAvail: w[4], Files: w[5], FilesFree: w[6]}
	case "scandir":
		res = uvcgo.FSDirents(rec)
	case "readlink", "realpath", "mkdtemp":
		res = string(rec.Bytes())
	}
	if q.Flags().Has(event.Closed) || !q.hold(res) {
		q.unclaimed(res) // reqCore.settle drops it
		return res, nil
	}
	return q.delivered(q.result(res)), nil
}

func (q *FSRequest[T]) cancel(req uvcgo.Request) { q.loop.CancelFS(req) }

// statOfWords is the syscall.Stat_t of the words of libuv's uv_stat_t
// (uvcgo.FSStatWords), as stat(2) fills it.
func statOfWords(w [20]uint64) *syscall.Stat_t {
	st := new(syscall.Stat_t)
	set(&st.Dev, w[0])
	set(&st.Mode, w[1])
	set(&st.Nlink, w[2])
	set(&st.Uid, w[3])
	set(&st.Gid, w[4])
	set(&st.Rdev, w[5])
	set(&st.Ino, w[6])
	set(&st.Size, w[7])
	set(&st.Blksize, w[8])
	set(&st.Blocks, w[9])
	for i, ts := range statTimes(st) {
		set(&ts.Sec, w[12+2*i])
		set(&ts.Nsec, w[13+2*i])
	}
	return st
}

// set stores v in a field whatever integer type the platform gives it.
func set[T ~uint16 | ~int32 | ~int64 | ~uint32 | ~uint64](p *T, v uint64) { *p = T(v) }
