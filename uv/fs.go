package uv

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/reactor"
)

// The file system requests: libuv's uv_fs_* family, each a function (for
// a path) or a File method (for a descriptor) that submits one FSRequest
// and returns it, typed by its result. Every one takes a context that
// bounds it: when ctx ends before the request completes, it completes with
// ctx's error, and if the pool has not started it, it never runs (as
// closing it does). A nil ctx is refused with an error matching
// event.ErrNilContext; context.Background bounds nothing. Wait for one
// with Await (off the loop) or subscribe with OnDone (on it): no request
// blocks the loop.
// The same request gives the same result and the same error on both
// drivers: libuv's pool runs it on the libuv driver, DefaultTaskPool (the
// pool QueueTask uses) on the pure-Go driver, making the system calls
// libuv's worker makes.

// StatFS is what statfs(2) tells of a file system (libuv's uv_statfs_t).
type StatFS struct {
	Type        uint64 // the file system's type (f_type: 0xEF53 for ext4, ...)
	BlockSize   uint64 // the optimal transfer block size (f_bsize)
	Blocks      uint64 // the data blocks in all (f_blocks)
	BlocksFree  uint64 // the free blocks (f_bfree)
	BlocksAvail uint64 // the free blocks an unprivileged user may use (f_bavail)
	Files       uint64 // the file nodes in all (f_files)
	FilesFree   uint64 // the free file nodes (f_ffree)
}

// CopyFlag changes what CopyFile does (libuv's UV_FS_COPYFILE_*).
type CopyFlag int

const (
	// CopyExcl fails with an error matching fs.ErrExist when the
	// destination exists.
	CopyExcl CopyFlag = 1
	// CopyClone makes a copy-on-write clone (FICLONE) where the file
	// system can, and copies otherwise.
	CopyClone CopyFlag = 2
	// CopyCloneForce makes a clone or fails.
	CopyCloneForce CopyFlag = 4
)

// Stat asks for name's fs.FileInfo (uv_fs_stat), following symbolic links,
// as os.Stat: its Name is the base of name, its Sys a *syscall.Stat_t.
func Stat(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[fs.FileInfo], error) {
	return submitFS[fs.FileInfo](ctx, r, nil, pathOp("stat", name))
}

// Lstat is Stat of a symbolic link itself (uv_fs_lstat), as os.Lstat.
func Lstat(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[fs.FileInfo], error) {
	return submitFS[fs.FileInfo](ctx, r, nil, pathOp("lstat", name))
}

// Statfs asks what the file system holding name tells of itself
// (uv_fs_statfs).
func Statfs(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[StatFS], error) {
	return submitFS[StatFS](ctx, r, nil, pathOp("statfs", name))
}

// ReadDir lists the directory name (uv_fs_scandir), as os.ReadDir: its
// entries but "." and "..", sorted by name. An entry's Type is what the
// directory says (fs.ModeIrregular where it says nothing); its Info makes
// an lstat(2) call then, blocking: call it off the loop, or ask Lstat.
func ReadDir(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[[]fs.DirEntry], error) {
	return submitFS[[]fs.DirEntry](ctx, r, nil, pathOp("scandir", name))
}

// Mkdir makes the directory name with perm (less the umask), as os.Mkdir
// (uv_fs_mkdir). Mutating: see FSRequest for a request cancelled late.
func Mkdir(ctx context.Context, r *reactor.Reactor, name string, perm os.FileMode) (*FSRequest[struct{}], error) {
	op := pathOp("mkdir", name)
	op.Mode = int(perm.Perm())
	return submitFS[struct{}](ctx, r, nil, op)
}

// MkdirTemp makes a new directory (mode 0700) from template, whose last
// six bytes must be "XXXXXX" (else syscall.EINVAL): they are replaced by
// random ones (uv_fs_mkdtemp). It completes with the directory's path.
// Mutating: see FSRequest for a request cancelled late.
func MkdirTemp(ctx context.Context, r *reactor.Reactor, template string) (*FSRequest[string], error) {
	return submitFS[string](ctx, r, nil, pathOp("mkdtemp", template))
}

// Rmdir removes the empty directory name (uv_fs_rmdir). Mutating: see
// FSRequest for a request cancelled late.
func Rmdir(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[struct{}], error) {
	return submitFS[struct{}](ctx, r, nil, pathOp("rmdir", name))
}

// Unlink removes the file (not directory) name (uv_fs_unlink). Mutating:
// see FSRequest for a request cancelled late.
func Unlink(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[struct{}], error) {
	return submitFS[struct{}](ctx, r, nil, pathOp("unlink", name))
}

// RenameFile renames oldpath (a file or a directory) to newpath, replacing a file there, as os.Rename
// (uv_fs_rename); its error is an *os.LinkError. Mutating: see FSRequest
// for a request cancelled late.
func RenameFile(ctx context.Context, r *reactor.Reactor, oldpath, newpath string) (*FSRequest[struct{}], error) {
	return submitFS[struct{}](ctx, r, nil, twoPathOp("rename", oldpath, newpath))
}

// Link makes newname a hard link to oldname (uv_fs_link); its error is an
// *os.LinkError. Mutating: see FSRequest for a request cancelled late.
func Link(ctx context.Context, r *reactor.Reactor, oldname, newname string) (*FSRequest[struct{}], error) {
	return submitFS[struct{}](ctx, r, nil, twoPathOp("link", oldname, newname))
}

// Symlink makes newname a symbolic link to oldname (uv_fs_symlink); its
// error is an *os.LinkError. Mutating: see FSRequest for a request
// cancelled late.
func Symlink(ctx context.Context, r *reactor.Reactor, oldname, newname string) (*FSRequest[struct{}], error) {
	return submitFS[struct{}](ctx, r, nil, twoPathOp("symlink", oldname, newname))
}

// Readlink completes with the target of the symbolic link name
// (uv_fs_readlink).
func Readlink(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[string], error) {
	return submitFS[string](ctx, r, nil, pathOp("readlink", name))
}

// Realpath completes with the absolute path of name with every symbolic
// link, "." and ".." resolved (uv_fs_realpath, realpath(3)); name must
// exist.
func Realpath(ctx context.Context, r *reactor.Reactor, name string) (*FSRequest[string], error) {
	return submitFS[string](ctx, r, nil, pathOp("realpath", name))
}

// CopyFile copies the file src to dst with src's permissions, replacing
// dst unless flags holds CopyExcl (uv_fs_copyfile); its error is an
// *os.LinkError. A copy that fails removes the dst it made. Mutating: see
// FSRequest for a request cancelled late.
func CopyFile(ctx context.Context, r *reactor.Reactor, src, dst string, flags CopyFlag) (*FSRequest[struct{}], error) {
	op := twoPathOp("copyfile", src, dst)
	op.Flags = int(flags)
	return submitFS[struct{}](ctx, r, nil, op)
}

// Access checks that the calling process may access name as mode says
// (unix.R_OK, W_OK, X_OK or'ed, or F_OK: that it exists), with its real
// ids, as access(2) (uv_fs_access); it completes with no error when it
// may.
func Access(ctx context.Context, r *reactor.Reactor, name string, mode uint32) (*FSRequest[struct{}], error) {
	op := pathOp("access", name)
	op.Mode = int(mode)
	return submitFS[struct{}](ctx, r, nil, op)
}

// Chmod changes name's mode to mode's permission bits, as os.Chmod does
// with them (uv_fs_chmod). Mutating: see FSRequest for a request cancelled
// late.
func Chmod(ctx context.Context, r *reactor.Reactor, name string, mode os.FileMode) (*FSRequest[struct{}], error) {
	op := pathOp("chmod", name)
	op.Mode = int(mode.Perm())
	return submitFS[struct{}](ctx, r, nil, op)
}

// Chown changes name's owner and group, as os.Chown: -1 leaves one as it
// is (uv_fs_chown). Mutating: see FSRequest for a request cancelled late.
func Chown(ctx context.Context, r *reactor.Reactor, name string, uid, gid int) (*FSRequest[struct{}], error) {
	op := pathOp("chown", name)
	op.UID, op.GID = uid, gid
	return submitFS[struct{}](ctx, r, nil, op)
}

// Lchown is Chown of a symbolic link itself (uv_fs_lchown).
func Lchown(ctx context.Context, r *reactor.Reactor, name string, uid, gid int) (*FSRequest[struct{}], error) {
	op := pathOp("lchown", name)
	op.UID, op.GID = uid, gid
	return submitFS[struct{}](ctx, r, nil, op)
}

// Utime changes name's access and modification times, as os.Chtimes
// (uv_fs_utime), to the microsecond: libuv passes times as float seconds
// and keeps microseconds. Mutating: see FSRequest for a request cancelled
// late.
func Utime(ctx context.Context, r *reactor.Reactor, name string, atime, mtime time.Time) (*FSRequest[struct{}], error) {
	op := pathOp("utime", name)
	op.Atime, op.Mtime = seconds(atime), seconds(mtime)
	return submitFS[struct{}](ctx, r, nil, op)
}

// seconds is t as libuv takes it: seconds since the epoch, as a float.
func seconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// timespec is libuv's uv__fs_to_timespec: the seconds and nanoseconds of
// t, truncated to the microsecond.
func timespec(t float64) (sec, nsec int64) {
	sec = int64(t)
	nsec = int64((t - float64(sec)) * 1e9)
	nsec -= nsec % 1000
	if nsec < 0 {
		nsec += 1e9
		sec--
	}
	return sec, nsec
}

// pathOp and twoPathOp are the operations naming one path and two.
func pathOp(op, name string) fsOp { return fsOp{uvcgo.FSArgs{Op: op, Path: name}} }

func twoPathOp(op, oldpath, newpath string) fsOp {
	return fsOp{uvcgo.FSArgs{Op: op, Path: oldpath, Path2: newpath}}
}

// fdOp submits the operation op (an FSArgs without its descriptor) on f's
// descriptor: a closed File is refused with an error matching
// os.ErrClosed.
func fdOp[T any](ctx context.Context, f *File, op fsOp) (*FSRequest[T], error) {
	if err := f.usable(op.Op, true, 0); err != nil {
		return nil, err
	}
	return submitFS[T](ctx, f.r, f, op)
}

// StatAsync asks for the file's fs.FileInfo (uv_fs_fstat); see Stat.
func (f *File) StatAsync(ctx context.Context) (*FSRequest[fs.FileInfo], error) {
	return fdOp[fs.FileInfo](ctx, f, fsOp{uvcgo.FSArgs{Op: "fstat"}})
}

// SyncAsync commits the file's data and metadata to storage
// (uv_fs_fsync), as *os.File's Sync.
func (f *File) SyncAsync(ctx context.Context) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "fsync"}})
}

// DatasyncAsync commits the file's data, and only the metadata needed to
// read it back, to storage (uv_fs_fdatasync).
func (f *File) DatasyncAsync(ctx context.Context) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "fdatasync"}})
}

// TruncateAsync changes the file's size to size (uv_fs_ftruncate); a
// negative size is an error matching syscall.EINVAL. Mutating: see
// FSRequest for a request cancelled late.
func (f *File) TruncateAsync(ctx context.Context, size int64) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "ftruncate", Off: size}})
}

// ChmodAsync changes the file's mode (uv_fs_fchmod); see Chmod.
func (f *File) ChmodAsync(ctx context.Context, mode os.FileMode) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "fchmod", Mode: int(mode.Perm())}})
}

// ChownAsync changes the file's owner and group (uv_fs_fchown); see Chown.
func (f *File) ChownAsync(ctx context.Context, uid, gid int) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "fchown", UID: uid, GID: gid}})
}

// UtimeAsync changes the file's access and modification times
// (uv_fs_futime); see Utime.
func (f *File) UtimeAsync(ctx context.Context, atime, mtime time.Time) (*FSRequest[struct{}], error) {
	return fdOp[struct{}](ctx, f, fsOp{uvcgo.FSArgs{Op: "futime", Atime: seconds(atime), Mtime: seconds(mtime)}})
}

// Stat returns the file's fs.FileInfo, as *os.File's Stat, waiting for
// StatAsync: not on the loop goroutine.
func (f *File) Stat() (fs.FileInfo, error) { return awaitFile(f.StatAsync(context.Background())) }

// Sync commits the file to storage, as *os.File's Sync, waiting for
// SyncAsync: not on the loop goroutine.
func (f *File) Sync() error {
	_, err := awaitFile(f.SyncAsync(context.Background()))
	return err
}

// Truncate changes the file's size, as *os.File's Truncate, waiting for
// TruncateAsync: not on the loop goroutine.
func (f *File) Truncate(size int64) error {
	_, err := awaitFile(f.TruncateAsync(context.Background(), size))
	return err
}

// awaitFile waits for a File's request made (or refused) by an Async
// method, as the File's goroutine-blocking methods do.
func awaitFile[T any](q *FSRequest[T], err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return q.await(context.Background())
}

// result turns what a request's system call gave (the same on both
// drivers: a *syscall.Stat_t, the directory's entries, a number, ...) into
// the request's T.
func (q *FSRequest[T]) result(res any) any {
	switch q.op {
	case "stat", "lstat", "fstat":
		st, _ := res.(*syscall.Stat_t)
		return fileInfoOf(filepath.Base(q.path), st)
	case "scandir":
		ents, _ := res.([]uvcgo.FSDirent)
		out := make([]fs.DirEntry, len(ents))
		for i, e := range ents {
			out[i] = &dirEntry{dir: q.path, name: e.Name, typ: direntModes[min(uint(e.Type), uint(len(direntModes)-1))]}
		}
		return out
	case "open", "read", "write", "statfs", "readlink", "realpath", "mkdtemp":
		return res
	}
	return struct{}{}
}

// fileInfo is a stat's fs.FileInfo.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

// fileInfoOf is the fs.FileInfo of st for a file whose base name is name.
func fileInfoOf(name string, st *syscall.Stat_t) fs.FileInfo {
	fi := &fileInfo{name: name}
	if st != nil {
		fi.st = *st
	}
	return fi
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(statTimes(&fi.st)[1].Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

// Mode is the fs.FileMode of st_mode, as package os makes it.
func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	for _, b := range []struct {
		bit  uint32
		mode fs.FileMode
	}{{syscall.S_ISGID, fs.ModeSetgid}, {syscall.S_ISUID, fs.ModeSetuid}, {syscall.S_ISVTX, fs.ModeSticky}} {
		if uint32(fi.st.Mode)&b.bit != 0 {
			m |= b.mode
		}
	}
	return m
}

// direntModes is the fs.FileMode type of each of libuv's uv_dirent_type_t,
// by number; the last is that of any other.
var direntModes = [...]fs.FileMode{
	uvcgo.DirentUnknown:   fs.ModeIrregular,
	uvcgo.DirentFile:      0,
	uvcgo.DirentDir:       fs.ModeDir,
	uvcgo.DirentLink:      fs.ModeSymlink,
	uvcgo.DirentFIFO:      fs.ModeNamedPipe,
	uvcgo.DirentSocket:    fs.ModeSocket,
	uvcgo.DirentChar:      fs.ModeDevice | fs.ModeCharDevice,
	uvcgo.DirentBlock:     fs.ModeDevice,
	uvcgo.DirentBlock + 1: fs.ModeIrregular,
}

// dirEntry is one entry ReadDir gives.
type dirEntry struct {
	dir, name string
	typ       fs.FileMode
}

func (d *dirEntry) Name() string               { return d.name }
func (d *dirEntry) IsDir() bool                { return d.typ.IsDir() }
func (d *dirEntry) Type() fs.FileMode          { return d.typ }
func (d *dirEntry) String() string             { return fs.FormatDirEntry(d) }
func (d *dirEntry) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.dir, d.name)) }
