package uvcgo

/*
#include <stdlib.h>
#include "fs.h"
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// File system requests (fs.c) are uv_fs_t requests on libuv's thread pool,
// all submitted through one call, FS. Each reports one CompletionFS record
// for its id: Status 0 or the error, N the result (a descriptor, a byte
// count), and for a request whose result is more than a number its
// payload (Bytes): a read's bytes, a stat's uv_stat_t (FSStatWords), a
// statfs's seven numbers, a scandir's entries (FSDirents), a path
// (readlink, realpath, mkdtemp).

// fsOps maps an FSArgs.Op to libuv's uv_fs_type.
var fsOps = map[string]C.int{
	"open": C.UV_FS_OPEN, "close": C.UV_FS_CLOSE, "read": C.UV_FS_READ, "write": C.UV_FS_WRITE,
	"stat": C.UV_FS_STAT, "lstat": C.UV_FS_LSTAT, "fstat": C.UV_FS_FSTAT, "statfs": C.UV_FS_STATFS,
	"ftruncate": C.UV_FS_FTRUNCATE, "utime": C.UV_FS_UTIME, "futime": C.UV_FS_FUTIME,
	"access": C.UV_FS_ACCESS, "chmod": C.UV_FS_CHMOD, "fchmod": C.UV_FS_FCHMOD,
	"fsync": C.UV_FS_FSYNC, "fdatasync": C.UV_FS_FDATASYNC, "unlink": C.UV_FS_UNLINK,
	"rmdir": C.UV_FS_RMDIR, "mkdir": C.UV_FS_MKDIR, "mkdtemp": C.UV_FS_MKDTEMP,
	"rename": C.UV_FS_RENAME, "scandir": C.UV_FS_SCANDIR, "link": C.UV_FS_LINK,
	"symlink": C.UV_FS_SYMLINK, "readlink": C.UV_FS_READLINK, "realpath": C.UV_FS_REALPATH,
	"copyfile": C.UV_FS_COPYFILE, "chown": C.UV_FS_CHOWN, "fchown": C.UV_FS_FCHOWN,
	"lchown": C.UV_FS_LCHOWN,
}

// FS submits the request a describes (uv_fs_<a.Op>); an Op libuv has no
// request for is refused with EINVAL.
func (l *Loop) FS(id uint64, a *FSArgs) (Request, error) {
	op, ok := fsOps[a.Op]
	if !ok {
		return 0, errorOf("uv_fs_"+a.Op, -int(syscall.EINVAL))
	}
	c := C.uvev_fs_args{op: op, n: C.size_t(a.N), off: C.int64_t(a.Off), fd: C.int(a.FD),
		flags: C.int(a.Flags), mode: C.int(a.Mode), uid: C.int64_t(a.UID), gid: C.int64_t(a.GID),
		atime: C.double(a.Atime), mtime: C.double(a.Mtime)}
	// libuv copies the paths (and fs.c a write's bytes) before uv_fs_*
	// returns: they are freed below. An empty path is "", never NULL,
	// which libuv asserts against (the system answers ENOENT).
	c.path, c.path2 = C.CString(a.Path), C.CString(a.Path2)
	defer C.free(unsafe.Pointer(c.path))
	defer C.free(unsafe.Pointer(c.path2))
	var p *C.char
	if a.Op == "write" {
		p, c.n = cbytes(a.P), C.size_t(len(a.P))
	}
	var r C.uintptr_t
	if rc := C.uvev_fs(l.mut(), C.uint64_t(id), &c, p, &r); rc != 0 {
		return 0, errorOf("uv_fs_"+a.Op, int(rc))
	}
	return Request(r), nil
}

// CancelFS cancels a request that has not started (uv_cancel); EBUSY when
// it runs already. Call it only while the request is in flight.
func (l *Loop) CancelFS(r Request) error {
	l.mut()
	return errorOf("uv_cancel", int(C.uvev_fs_cancel(C.uintptr_t(r))))
}
