// Package kind is the interface between the reactor and the packages that
// implement kinds of events over libuv handles (package uv): the handle
// table, the libuv loop, and the queue of references the collector took.
// It is internal, so applications never see this plumbing on Reactor.
package kind

import (
	"io"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
)

// Handle is the loop-side record of a C-owned event: what the reactor needs
// to route libuv's completion records to it. The reactor keeps it in its id
// table from AddHandle until libuv's close callback has freed the C memory.
type Handle interface {
	// Kind names the kind for Stats ("trigger", "poll", ...).
	Kind() string
	// HandleEvent returns the event, to close it when the reactor closes
	// or when its reference is collected.
	HandleEvent() event.Event
	// Completed receives a completion record (never CompletionClosed). The
	// record and its payload are valid during the call only, unless the
	// kind takes the payload (uvcgo.Take).
	Completed(c *uvcgo.Completion)
}

// Host is a reactor as kind implementations see it. Every method but
// Dropped must be called with the reactor's ownership (inside Call or a
// callback).
type Host interface {
	// Loop returns the libuv loop, to create handles on. Its calls that
	// change libuv's state mark it dirty themselves.
	Loop() *uvcgo.Loop
	// Closing reports whether the reactor's Close has begun: constructors
	// and Start must refuse with reactor.ErrReactorClosed.
	Closing() bool
	// AddHandle records h and returns the id its C handle must report
	// with. Call it before creating the C handle; if that fails, DropHandle.
	AddHandle(h Handle) eventref.ID
	// DropHandle forgets a handle whose C side never came to exist.
	DropHandle(id eventref.ID)
	// CloseHandle starts closing a C handle; its id is retired when the
	// close callback has reported.
	CloseHandle(h uvcgo.Handle)
	// Retired reports whether id is no longer in the table: its C handle
	// never came to exist (DropHandle) or its close callback has reported.
	// What a wait for one handle's close looks at, where the count of C
	// handles would include others still closing. With ownership.
	Retired(id eventref.ID) bool
	// CountHandle adds delta to the live handles of kind k in Stats: a
	// Go-owned event standing for what is a libuv handle or request on the
	// other driver (the pure-Go driver's polls, sockets, fs events, phase
	// hooks, lookups and file requests) counts there as the C one does.
	// With ownership.
	CountHandle(k string, delta int)
	// EveryTurn adds delta to the number of started hooks that need libuv
	// turned on every loop iteration (prepare and check handles).
	EveryTurn(delta int)
	// AddTurnHook runs fn in every loop iteration of the pure-Go driver, at
	// the phase which names, in libuv's order (idle, prepare, check) after
	// the iteration's timers and queued work, where the libuv driver turns
	// libuv. While an idle hook is there the loop does not block. A hook removed (remove) during an iteration does not run in
	// the rest of it. With ownership; the libuv driver has its own hooks.
	AddTurnHook(which uvcgo.Phase, fn func()) (remove func())
	// Queue runs fn on the loop's next turn (or at the reactor's Close),
	// never in the caller nor in another goroutine's Call or Post on a loop
	// nobody runs: as libuv delivers only inside uv_run. Safe from any
	// goroutine; it fails with ErrReactorClosed once Close has begun.
	Queue(fn func()) error
	// PostOwned queues fn for the goroutine that owns the loop, as
	// Reactor.Post queues it from another goroutine (the loop, or a
	// direct operation, runs it before it lets the loop go), and reports
	// true; when no goroutine owns the loop it does nothing and reports
	// false, where Post would run fn in the caller. It never runs fn in
	// the caller: a goroutine shared by many events (a process's reaper)
	// posts with it and runs fn with ownership some other way when it
	// reports false (Reactor.Post from a goroutine of its own). Safe from
	// any goroutine; it fails with ErrReactorClosed once the reactor is
	// closed.
	PostOwned(fn func()) (bool, error)
	// AddCloser registers fn to run when the reactor closes, for Go-owned
	// events the reactor does not otherwise know (their subscribers must
	// hear ErrClosed too). fn must not keep the event reachable (use a
	// weak.Pointer) if the event may be dropped without Close. remove
	// unregisters it; call it when the event closes. Call with ownership.
	AddCloser(fn func()) (remove func())
	// KeepFile has f closed before the C loop is freed if the reactor is
	// dropped without Close (its handles are then closed in C, without
	// their kinds' close hooks): a duplicate descriptor of a handle's
	// that would otherwise hold the socket open until its own collection,
	// or a socket no handle holds (an accepted connection unopened in
	// libuv), which nothing else would close. f's Close must be safe to
	// call after f closed otherwise (it then does nothing). Call
	// keeper.ForgetFile(f) when f is closed: keeper does not hold the
	// reactor, so f may keep it. Safe from any goroutine.
	KeepFile(f io.Closer) (keeper FileKeeper)
	// Linger makes the reactor's Close wait, once every event is closed,
	// until done is closed: work that outlives its event (a child being
	// terminated) is over before Close returns. Shutdown's context bounds
	// that wait, and its error then names what (see
	// reactor.ErrCloseIncomplete): what gives the name as it is then (a
	// child being terminated, or reaped with its output still open). Safe
	// from any goroutine; once Close has stopped waiting it does nothing.
	Linger(what func() string, done <-chan struct{})
	// LingerReset is Linger for work that can be cut short: a lingering
	// close of a connection. When Shutdown's context ends first, the
	// reactor calls reset, with ownership of the loop, for each one not
	// over yet (it resets the connection and reports the drop; done
	// closes soon after), names it in Shutdown's error and waits for it.
	// Safe from any goroutine; once Close has stopped waiting it does
	// nothing.
	LingerReset(what func() string, done <-chan struct{}, reset func())
	// Dropped queues the close of the event whose reference was collected
	// (eventref.Dropper). Safe from any goroutine.
	Dropped(id eventref.ID)
	// Reported reports whether libuv has reported the request of id in
	// the turn being dispatched, its record not yet handed to it: the
	// shim has freed the C request already, so it must not be cancelled
	// (a callback of an earlier record closing it). With ownership.
	Reported(id eventref.ID) bool
	// ReadAhead reports whether a read of the stream (or a datagram of
	// the UDP) of id is among the records of the turn being dispatched,
	// not yet handed to it: bytes libuv read before the stream stopped
	// reading, still to come. With ownership.
	ReadAhead(id eventref.ID) bool
	// SetKernel makes k what the loop blocks in when it has nothing to
	// run (nil: none; the loop then parks in Go): the pure-Go driver's
	// epoll set, once it has members. With ownership, never while the
	// loop waits in the old one.
	SetKernel(k Kernel)
}

// Kernel is a driver's wait in the kernel: the loop goroutine blocks in
// Wait itself (as libuv blocks in epoll_wait), with no goroutine between
// the kernel and the loop. Wait and Deliver run on the loop goroutine.
type Kernel interface {
	// Wait blocks for at most timeoutMS milliseconds (-1: with no limit,
	// 0: not at all) until a descriptor is ready or Wake is called, and
	// collects what is ready without delivering it. It reports whether it
	// may have left readiness uncollected (its buffer was full).
	Wait(timeoutMS int) (more bool)
	// Deliver hands what the last Wait collected to its members and
	// returns how many it reached. A callback may panic out of it: what
	// it left is reported again by the next Wait (the members are
	// level-triggered).
	Deliver() int
	// Wake makes a Wait in progress, or the next one, return. Safe from
	// any goroutine; the reactor calls it only while the loop sleeps in
	// Wait, once per sleep, and never after SetKernel replaced k.
	Wake()
	// FD is a descriptor that is readable whenever Wait would return at
	// once; the loop watches it in Go's netpoller while it parks in Go.
	FD() int
}

// HostOf returns the Host view of the reactor whose Owner (Reactor.Owner)
// is o: a reactor's owner has a Host method, which no other Owner has, so
// it panics on any other. The view travels on the owner, a private type of
// package reactor, so it never shows on Reactor's API.
func HostOf(o event.Owner) Host { return o.(interface{ Host() Host }).Host() }

// A FileKeeper unregisters the files Host.KeepFile keeps. (An interface
// value rather than a function KeepFile returns: an accepted connection's
// socket keeps it with no closure made.)
type FileKeeper interface {
	// ForgetFile unregisters f; call it when f is closed. Safe from any
	// goroutine.
	ForgetFile(f io.Closer)
}
