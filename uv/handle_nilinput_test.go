package uv_test

import (
	"syscall"
	"testing"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/internal/conform"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

// nilInputFuncs are the package's exported functions, by name.
var nilInputFuncs = map[string]any{
	"Dial": uv.Dial, "DialAsync": uv.DialAsync, "Listen": uv.Listen, "ListenUDP": uv.ListenUDP,
	"LookupProcess": uv.LookupProcess, "NewAddrInfo": uv.NewAddrInfo, "NewCheck": uv.NewCheck,
	"NewCommand": uv.NewCommand, "NewFSEvent": uv.NewFSEvent, "NewFSPoll": uv.NewFSPoll, "NewIdle": uv.NewIdle,
	"NewNameInfo": uv.NewNameInfo, "NewPoll": uv.NewPoll, "NewPollProxy": uv.NewPollProxy,
	"NewPrepare": uv.NewPrepare, "NewSignal": uv.NewSignal, "NewTaskPool": uv.NewTaskPool,
	"NewThread": uv.NewThread[any], "NewTrigger": uv.NewTrigger,
	"OpenFile": uv.OpenFile, "OpenPipe": uv.OpenPipe, "OpenIPC": uv.OpenIPC, "ReadLines": uv.ReadLines, "OpenTTY": uv.OpenTTY, "Pipe": uv.Pipe,
	"QueueTask": uv.QueueTask[any], "QueueTaskIn": uv.QueueTaskIn[any], "StartProcess": uv.StartProcess,
	"StdioFile": uv.StdioFile, "StdioWriter": uv.StdioWriter, "IOOf": uv.IOOf, "UDPOf": uv.UDPOf,
	"ResetTTYMode": uv.ResetTTYMode,
	"Access":       uv.Access, "Chmod": uv.Chmod, "Chown": uv.Chown, "CopyFile": uv.CopyFile, "Lchown": uv.Lchown,
	"Link": uv.Link, "Lstat": uv.Lstat, "Mkdir": uv.Mkdir, "MkdirTemp": uv.MkdirTemp, "OpenAsync": uv.OpenAsync,
	"ReadDir": uv.ReadDir, "Readlink": uv.Readlink, "Realpath": uv.Realpath, "RenameFile": uv.RenameFile,
	"Rmdir": uv.Rmdir, "Stat": uv.Stat, "Statfs": uv.Statfs, "Symlink": uv.Symlink, "Unlink": uv.Unlink,
	"Utime": uv.Utime,
}

// Every exported function and method of the package, called with nil and
// zero input (zero values, nil arguments), refuses with a clear error and
// never panics.
func TestNilInputsRefused(t *testing.T) {
	conform.CheckNilInputs(t, conform.NilInputs{
		Dir:   ".",
		Funcs: nilInputFuncs,
		Types: []any{
			(*uv.AddrInfo)(nil), (*uv.DNSError)(nil), (*uv.Dialer)(nil), (*uv.Command)(nil), (*uv.OutputMode)(nil),
			(*uv.FSEvent)(nil), (*uv.FSEvents)(nil), (*uv.FSPoll)(nil), (*uv.FSRequest[[]byte])(nil), (*uv.File)(nil),
			(*uv.IO)(nil), (*uv.ListenConfig)(nil), (*uv.Listener)(nil),
			(*uv.NameInfo)(nil), (*uv.Phase)(nil), (*uv.Poll)(nil), (*uv.PollEvents)(nil),
			(*uv.PollProxy)(nil), (*uv.Process)(nil), (*uv.Signal)(nil), (*uv.Task[any])(nil),
			(*uv.TaskPool)(nil), (*uv.Thread[any])(nil), (*uv.Trigger)(nil), (*uv.UDP)(nil),
			(*uv.TTYMode)(nil), (*uv.CopyFlag)(nil), (*uv.StatFS)(nil), (*uv.IPC)(nil), (*uv.Passed)(nil),
			(*uv.DropError)(nil),
		},
		Refusals: []error{event.ErrNilEvent, reactor.ErrZeroReactor, syscall.EINVAL},
		MaySucceed: map[string]string{
			"ResetTTYMode":          "with no terminal mode changed there is nothing to reset",
			"zero DNSError.Unwrap":  "a zero code is no error",
			"zero DropError.Unwrap": "a zero drop has no cause",
			"zero Passed.Close":     "a zero Passed holds no handle: nothing to close",
		},
	})
}

// Every constructor of the package, given a live reactor and nil or zero
// other arguments, refuses or makes something usable, on both drivers:
// never a panic, never a nil result without an error.
func TestNilArgumentsOnLiveReactor(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		uv.UvtServe(t, u)
		conform.CheckNilArgs(t, u.Reactor, nilInputFuncs, map[string]string{
			"OpenPipe": "descriptor 0 is the test's standard input, not a nil input",
			"OpenTTY":  "descriptor 0 is the test's standard input, not a nil input",
			"OpenIPC":  "descriptor 0 is the test's standard input, not a nil input",
		})
	})
}
