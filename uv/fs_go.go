package uv

// The pure-Go driver's file system requests that are more than one system
// call: what libuv's worker does for them (uv__fs_work), written with Go's
// calls, giving what file_uv.go's done reads from libuv's record.

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// scandir lists op.Path as libuv's scandir does: the entries but "." and
// "..", sorted by name, each with its type as the directory gives it.
func (op *fsOp) scandir() (any, syscall.Errno) {
	ents, err := os.ReadDir(op.Path)
	if err != nil {
		return nil, errnoOf(err)
	}
	out := make([]uvcgo.FSDirent, len(ents))
	for i, e := range ents {
		out[i] = uvcgo.FSDirent{Name: e.Name(), Type: direntType(e.Type())}
	}
	return out, 0
}

// direntType is libuv's uv_dirent_type_t for a file type.
func direntType(m os.FileMode) int {
	for t, mode := range direntModes[:uvcgo.DirentBlock+1] {
		if t != uvcgo.DirentUnknown && mode == m.Type() {
			return t
		}
	}
	return uvcgo.DirentUnknown
}

// readlink gives the link's target, growing the buffer until it holds it.
func (op *fsOp) readlink() (any, syscall.Errno) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlink(op.Path, buf)
		if err != nil {
			return nil, errnoOf(err)
		}
		if n < size {
			return string(buf[:n]), 0
		}
	}
}

// realpath resolves op.Path as realpath(3): absolute, every link followed;
// a missing component is an error.
func (op *fsOp) realpath() (any, syscall.Errno) {
	abs, err := filepath.Abs(op.Path)
	if err != nil {
		return nil, errnoOf(err)
	}
	p, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, errnoOf(err)
	}
	return p, 0
}

// mkdtemp makes a directory from op.Path, a template ending in "XXXXXX",
// as mkdtemp(3): the six bytes replaced by random letters and digits until
// a name is free.
func (op *fsOp) mkdtemp() (any, syscall.Errno) {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	prefix, ok := strings.CutSuffix(op.Path, "XXXXXX")
	if !ok {
		return nil, syscall.EINVAL
	}
	for range 1 << 16 {
		var name [6]byte
		for i := range name {
			name[i] = chars[rand.IntN(len(chars))]
		}
		p := prefix + string(name[:])
		err := unix.Mkdir(p, 0o700)
		if err == nil {
			return p, 0
		}
		if err != unix.EEXIST {
			return nil, errnoOf(err)
		}
	}
	return nil, syscall.EEXIST
}

// copyFile copies op.Path to op.Path2 as libuv's copyfile does: the
// destination made (or, without CopyExcl, replaced) with the source's
// mode, cloned where CopyClone or CopyCloneForce asks, removed again if
// the copy fails.
func (op *fsOp) copyFile() syscall.Errno {
	src, err := os.Open(op.Path)
	if err != nil {
		return errnoOf(err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return errnoOf(err)
	}
	flag := os.O_WRONLY | os.O_CREATE
	if op.Flags&int(CopyExcl) != 0 {
		flag |= os.O_EXCL
	}
	dst, err := os.OpenFile(op.Path2, flag, st.Mode().Perm())
	if err != nil {
		return errnoOf(err)
	}
	if same, _ := dst.Stat(); os.SameFile(st, same) {
		dst.Close()
		return 0
	}
	err = copyInto(dst, src, st.Mode().Perm(), CopyFlag(op.Flags))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(op.Path2)
	}
	return errnoOf(err)
}

// copyInto gives dst src's mode and bytes, by a clone when flags ask for
// one (and only by one with CopyCloneForce).
func copyInto(dst, src *os.File, perm os.FileMode, flags CopyFlag) error {
	if err := dst.Chmod(perm); err != nil && !errors.Is(err, syscall.EPERM) {
		return err
	}
	if err := dst.Truncate(0); err != nil {
		return err
	}
	if flags&(CopyClone|CopyCloneForce) != 0 {
		err := fileClone(int(dst.Fd()), int(src.Fd()))
		if err == nil || flags&CopyCloneForce != 0 {
			return err
		}
	}
	_, err := dst.ReadFrom(src)
	return err
}
