package uvcgo

import (
	"bytes"
	"encoding/binary"
)

// FSArgs are the arguments of one file system request (Loop.FS). Op is
// libuv's name for it without "uv_fs_" ("stat", "rename", ...); what a
// request does not take is ignored.
type FSArgs struct {
	Op    string
	Path  string // the path a request names
	Path2 string // rename, link, symlink, copyfile: the new path
	P     []byte // write: the bytes, copied
	N     int    // read: the most bytes to read
	Off   int64  // read, write: -1 for the descriptor's position; ftruncate: the size
	FD    int
	Flags int // open: open(2)'s; copyfile: UV_FS_COPYFILE_*
	Mode  int // open, mkdir, chmod, fchmod: the permissions; access: R_OK ...
	UID   int // chown, fchown, lchown (-1: unchanged)
	GID   int
	Atime float64 // utime, futime: seconds since the epoch
	Mtime float64
}

// FSStatWords returns the 20 64-bit words of the uv_stat_t a stat's record
// carries (st_dev, st_mode, st_nlink, st_uid, st_gid, st_rdev, st_ino,
// st_size, st_blksize, st_blocks, st_flags, st_gen, then the seconds and
// nanoseconds of st_atim, st_mtim, st_ctim, st_birthtim); ok is false when
// the record carries none.
func FSStatWords(c *Completion) (w [20]uint64, ok bool) {
	return words[[20]uint64](c.Bytes())
}

// FSPollWords returns the words of the two uv_stat_t an fs poll's record
// carries, the previous stat and the current one (as FSStatWords; all zero
// where libuv has none); ok is false when the record carries none.
func FSPollWords(c *Completion) (prev, curr [20]uint64, ok bool) {
	both, ok := words[[40]uint64](c.Bytes())
	copy(prev[:], both[:20])
	copy(curr[:], both[20:])
	return prev, curr, ok
}

// FSStatFSWords returns the seven numbers a statfs's record carries
// (f_type, f_bsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree).
func FSStatFSWords(c *Completion) (w [7]uint64, ok bool) {
	return words[[7]uint64](c.Bytes())
}

// words reads b as an array of native 64-bit words, if it is one.
func words[A [20]uint64 | [40]uint64 | [7]uint64](b []byte) (w A, ok bool) {
	if len(b) != binary.Size(w) {
		return w, false
	}
	_, err := binary.Decode(b, binary.NativeEndian, &w)
	return w, err == nil
}

// An FSDirent is one entry of a scandir: its name and libuv's
// uv_dirent_type_t.
type FSDirent struct {
	Name string
	Type int
}

// libuv's uv_dirent_type_t.
const (
	DirentUnknown = iota
	DirentFile
	DirentDir
	DirentLink
	DirentFIFO
	DirentSocket
	DirentChar
	DirentBlock
)

// FSDirents returns the entries a scandir's record carries, in libuv's
// order.
func FSDirents(c *Completion) []FSDirent {
	var ents []FSDirent
	for b := c.Bytes(); len(b) > 1; {
		typ := int(b[0])
		end := bytes.IndexByte(b[1:], 0)
		if end < 0 {
			break
		}
		ents = append(ents, FSDirent{Name: string(b[1 : 1+end]), Type: typ})
		b = b[2+end:]
	}
	return ents
}
