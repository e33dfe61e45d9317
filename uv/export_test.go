package uv

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventref"
	uvcgo "github.com/uvevent/uvevent/internal/cgo"
	"github.com/uvevent/uvevent/internal/kind"
	"github.com/uvevent/uvevent/reactor"
)

// What the external tests (package uv_test) need to reach inside the
// package, in the export_test.go habit of Go's standard library. Every name
// starts with Uvt so that it cannot clash with the package's own
// identifiers. The helpers every test shares are in helpers_test.go.

// The pure-Go driver's lookups.

// UvtResolver is what the pure-Go driver's lookups ask of Go's resolver.
type UvtResolver = resolver

// UvtSetResolver makes the pure-Go driver's lookups submitted until the
// test ends use rs instead of Go's resolver. Tests that call it must not
// run in parallel.
func UvtSetResolver(t testing.TB, rs UvtResolver) {
	old := goResolver
	goResolver = rs
	t.Cleanup(func() { goResolver = old })
}

// UvtResolverError is the DNSError a lookup on the pure-Go driver reports
// for err, an error of Go's resolver.
func UvtResolverError(err error) error {
	return &DNSError{Op: "uv_getaddrinfo", Name: "x", Code: resolverCode(err), Err: err}
}

// Poll, poll proxy, dns and fs event.

// UvtPolling returns the mask p's descriptor is polled for now (0:
// stopped).
func UvtPolling(p *Poll) PollEvents {
	var m PollEvents
	p.e.drv.reactorOf().Call(func() { m = p.e.polling })
	return m
}

// UvtEAIErrors returns the UV_EAI_* codes and their errors.
func UvtEAIErrors() map[int]error {
	m := map[int]error{}
	for code, c := range eaiCodes {
		m[code] = c.err
	}
	return m
}

// UvtWatchedDirs lists the directories below f's root that have a watch.
func UvtWatchedDirs(f *FSEvent) []string {
	var dirs []string
	f.e.drv.reactorOf().Call(func() { dirs = f.e.watchedDirs() })
	return dirs
}

// UvtFSHandles counts what u's fs events hold the way libuv counts their
// C handles: one per FSEvent made and not yet freed, one per child watch
// of a recursive one. On the libuv driver it is Stats().CHandles; on the
// pure-Go driver, the FSEvents in Stats().Handles and the child watchers
// on the reactor's inotify descriptor.
func UvtFSHandles(u *UvtReactor) int {
	s := u.Stats()
	if u.Driver() == reactor.DriverLibuv {
		return s.CHandles
	}
	n := s.Handles["fsevent"]
	return n + inotifyChildWatches(u)
}

// UvtWatchError is the error a watch that cannot be added reports.
func UvtWatchError(path string, err error) error { return watchError(path, err) }

// UvtSignalQueued reports whether s has a notification queued on its loop
// that has not run yet.
func UvtSignalQueued(s *Signal) bool { return s.pending.Load() != 0 }

// UvtSignalsQueued counts the signals s has queued on its loop, to be told.
func UvtSignalsQueued(s *Signal) int { return bits.OnesCount64(s.pending.Load()) }

// File.

// UvtFSOpen submits the open of name without waiting for it (OpenFile
// waits), so that a test can hold a request in flight.
func UvtFSOpen(r *reactor.Reactor, name string, flag int) (*FSRequest[*File], error) {
	return OpenAsync(context.Background(), r, name, flag, 0)
}

// UvtPoolSize is how many file operations run at once on either driver:
// libuv's pool and DefaultTaskPool have the same size (4, or what a valid
// UV_THREADPOOL_SIZE says).
func UvtPoolSize() int { return DefaultTaskPool.workers }

// UvtTriggerID returns the id tr's event has in its reactor's table.
func UvtTriggerID(tr *Trigger) eventref.ID { return tr.e.(*triggerEvent).id }

// UvtSend sends on the trigger whose event (event.Deref of a *Trigger) ev
// is, holding no reference to the Trigger.
func UvtSend(ev event.Event) error { return ev.(sender).send() }

// UvtDropped does what the runtime's cleanup does for a collected reference.
func UvtDropped(r *reactor.Reactor, id eventref.ID) { kind.HostOf(r.Owner()).Dropped(id) }

// UvtPolls returns how many polls u has (made and not yet freed), on
// either driver.
func UvtPolls(u *UvtReactor) int {
	if u.Driver() == reactor.DriverLibuv {
		return u.Stats().Handles["poll"]
	}
	n := 0
	u.Call(func() {
		if pl := uvtPoller(u); pl != nil {
			n = len(pl.byFD)
		}
	})
	return n
}

// UvtFSRead submits a read request on an open descriptor (one File would
// need a running loop to open).
func UvtFSRead(r *reactor.Reactor, fd uintptr) (*FSRequest[[]byte], error) {
	f := &File{r: r, name: "fd", fd: int(fd)}
	return f.ReadAsync(context.Background(), 64, 0)
}

// UvtSignalLines returns how many signal numbers the process-wide
// dispatcher holds registered with os/signal.
func UvtSignalLines() int { return signals.listening() }

// UvtStealChild kills p's child and reaps it behind p's back, as a wait
// for any child elsewhere in the program would: p's own wait then finds
// nothing. It holds p's reaping lock meanwhile, so that the theft wins.
func UvtStealChild(p *Process) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return err
	}
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(p.pid, &ws, 0, nil)
	return err
}

// UvtDropFile closes f's descriptor at once, as an abandoned open does,
// without a request (no loop need run).
func UvtDropFile(f *File) { f.drop() }

// UvtSwapFD makes fd f's descriptor and returns the one it had: a test
// gives a File a number no descriptor has, to see its close(2) fail.
func UvtSwapFD(f *File, fd int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.fd
	f.fd = fd
	return old
}

// UvtSetOutputWait makes d the bound on a child's output after its exit
// (OutputWait) until the test ends. Tests that change it do not run in
// parallel.
func UvtSetOutputWait(t testing.TB, d time.Duration) {
	old := outputWait
	outputWait = d
	t.Cleanup(func() { outputWait = old })
}

// UvtReadDeadline returns the read deadline c's loop holds: zero for none,
// long ago once it passed.
func UvtReadDeadline(c *IO) time.Time {
	var t time.Time
	c.e.r.Call(func() { t = c.e.dl.read.time() })
	return t
}

// IO.

// UvtKept returns the read buffers c keeps and their bytes, read from the
// loop.
func UvtKept(c *IO) (chunks, bytes int) {
	c.e.r.Call(func() { chunks, bytes = len(c.e.chunks), int(c.e.kept) })
	return chunks, bytes
}

// Listener: accept failures and their pauses.

// UvtAcceptPause returns the pause that the failed accept err reported
// began (0: err is no such error).
func UvtAcceptPause(err error) time.Duration {
	var p *pausedError
	if errors.As(err, &p) {
		return p.pause
	}
	return 0
}

// UvtAcceptCounts returns the connections l accepted and the accepts
// that failed.
func UvtAcceptCounts(l *Listener) (accepted, failed uint64) {
	return l.e.accepted.Load(), l.e.failed.Load()
}

// UvtFailAccepts makes the next n accept(2) calls of the pure-Go driver's
// listeners fail with errno, until the test ends. Tests that call it must
// not run in parallel.
func UvtFailAccepts(t testing.TB, errno syscall.Errno, n int32) {
	var left atomic.Int32
	left.Store(n)
	old := acceptSocket
	acceptSocket = func(fd int, nonblock bool, peer *unix.RawSockaddrAny) (int, error) {
		if left.Add(-1) >= 0 {
			return -1, errno
		}
		return old(fd, nonblock, peer)
	}
	t.Cleanup(func() { acceptSocket = old })
}

// Requests.

// UvtCancelable reports whether closing q now would ask libuv to cancel
// it: its C request is still libuv's, not freed by a completion that the
// turn has yet to hand to q.
func UvtCancelable[T any](q *FSRequest[T]) bool { return q.cancelable() }

// UvtLingerOf returns the libuv driver's lingering close of c in progress,
// or 0 (none, or c is the pure-Go driver's). On the loop.
func UvtLingerOf(c *IO) uvcgo.Linger {
	if s, ok := c.e.t.(*uvStream); ok {
		if x := s.rare.Load(); x != nil {
			return x.lg.uv
		}
	}
	return 0
}

// UvtLaneDupBudget makes the libuv driver's read lanes' budget of
// duplicate descriptors n until the test ends.
func UvtLaneDupBudget(t testing.TB, n int64) {
	laneDupBudgetSet.Store(n)
	t.Cleanup(func() { laneDupBudgetSet.Store(-1) })
}

// UvtLaneDupBudgetOf is the budget of the process's descriptor limit.
func UvtLaneDupBudgetOf() int64 { return laneDupBudget() }

// laneNames are the write lane's states by name.
var laneNames = [...]string{laneShut: "shut", laneOpen: "open", laneBusy: "busy", laneHeld: "held", laneWanted: "wanted"}

// UvtLane names the state of c's write lane: "shut", "open", "busy" (a
// caller's write in flight), "wanted" (busy, and the loop waits to take it
// back) or "held" (a caller's write went out in part and its rest is due
// on the loop). From any goroutine.
func UvtLane(c *IO) string { return laneNames[c.e.lane.state.Load()] }

// UvtTakeLane takes c's open write lane as a caller's write does, without
// writing: false when it is not open. UvtEndLaneWrite ends that write as
// the caller's does, next being "open" or "held".
func UvtTakeLane(c *IO) bool { return c.e.lane.state.CompareAndSwap(laneOpen, laneBusy) }

// UvtEndLaneWrite ends the write UvtTakeLane began: see UvtTakeLane.
func UvtEndLaneWrite(c *IO, next string) {
	c.e.lane.writeEnded(int32(slices.Index(laneNames[:], next)))
}

// The system calls the tests make themselves, as the package's own are
// made (sys_linux.go); export_linux_test.go has the Linux-only ones.

// UvtSocketpair makes a connected pair of blocking sockets, closed on
// exec (off Linux it fails with ENOSYS, as the package's own).
func UvtSocketpair(domain, typ, proto int) ([2]int, error) {
	return socketpairBlocking(domain, typ, proto)
}

// UvtGettid is the calling thread's id (-1 off Linux).
func UvtGettid() int { return gettid() }

// UvtSetRlimitCur sets an rlimit's soft limit to n, whatever the system's
// type of the field (uint64 on Linux and Darwin, int64 on FreeBSD).
func UvtSetRlimitCur[T int64 | uint64](cur *T, n int) { *cur = T(n) }

// UvtUDPLane names the state of u's read lane as UvtReadLane does an
// IO's ("failed": closed).
func UvtUDPLane(u *UDP) string {
	l := u.e.lane.Load()
	if l == nil {
		return "none"
	}
	return laneStateName(l.state.Load())
}

// laneStateName names a read lane's state (an IO's, a UDP's).
func laneStateName(state int32) string {
	return [...]string{rlaneShut: "shut", rlaneOpen: "open", rlaneBusy: "busy", rlaneWanted: "wanted", rlaneFailed: "failed"}[state]
}

// UvtLaneDups is how many read lanes' duplicate descriptors are open.
func UvtLaneDups() int64 { return laneDups.Load() }

// UvtReadLane names the state of c's read lane: "none" (not made),
// "shut", "open", "busy" (a caller reads or waits in the netpoller),
// "wanted" (busy, and the loop waits to read) or "failed" (its read(2)
// failed: shut for good). From any goroutine.
func UvtReadLane(c *IO) string {
	l := c.e.rlane.Load()
	if l == nil {
		return "none"
	}
	return laneStateName(l.state.Load())
}

// UvtLaneReadFunc returns the name of the function c's read lane hands
// the netpoller's wait (RawConn.Read), "" without a lane.
func UvtLaneReadFunc(c *IO) string {
	l := c.e.rlane.Load()
	if l == nil {
		return ""
	}
	return runtime.FuncForPC(reflect.ValueOf(l.readFn).Pointer()).Name()
}

// UvtAcceptsWaiting returns how many Accepts wait on l now.
func UvtAcceptsWaiting(l *Listener) int {
	q := &l.e.accepts
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}

// UvtAcceptsQueued returns how many connections wait on l for an Accept.
func UvtAcceptsQueued(l *Listener) int {
	q := &l.e.accepts
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// UvtAcceptStalled reports whether l stopped accepting because its queue
// for Accept is full (asked on the loop).
func UvtAcceptStalled(l *Listener) bool {
	var stalled bool
	l.e.r.Call(func() { stalled = l.e.stalled })
	return stalled
}

// UvtLaneDupAllowed reports that the read lanes may hold n duplicates.
func UvtLaneDupAllowed(n int64) bool { return laneDupAllowed(n) }

// UvtLaneCloser says who closes c's read lane's file at c's close: "loop",
// "waiting" (a Close is closing c on the loop now, and gets the file if
// it closes c) or "closer" (the loop left it to the caller of the Close
// that closed c); "none" without a lane.
func UvtLaneCloser(c *IO) string {
	l := c.e.rlane.Load()
	if l == nil {
		return "none"
	}
	return [...]string{closerNone: "loop", closerWaits: "waiting", closerHanded: "closer"}[l.closer.Load()]
}

// UvtIPCQueueLimit is how many received handles an IPC queues for Receive
// before it stops reading; UvtIPCReadBatch how many one read may bring
// past it.
const UvtIPCQueueLimit, UvtIPCReadBatch = ipcQueueLimit, ipcRecvBatch

// UvtIPCQueued returns how many received handles wait for Receive.
func UvtIPCQueued(p *IPC) int {
	q := &p.e.recvs
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// UvtIPCStalled reports whether p stopped reading because its queue for
// Receive is full (asked on the loop).
func UvtIPCStalled(p *IPC) bool {
	var stalled bool
	p.e.r.Call(func() { stalled = p.e.stalled })
	return stalled
}

// UvtIODescriptors returns the descriptors c holds, read on the loop: on
// the libuv driver libuv's (its handle's), the socket of a connection
// unopened in libuv (or opened over a duplicate: the lane's file's), and a
// read lane's duplicate; on the pure-Go driver its own.
func UvtIODescriptors(c *IO) int {
	n := 0
	c.e.r.Call(func() {
		switch s := c.e.t.(type) {
		case *goStream:
			if s.pl != nil {
				n = 1
			}
		case *uvStream:
			if s.h != 0 {
				n++
			}
			switch {
			case s.lz != nil:
				n++
			case s.h != 0 && c.e.rlane.Load() != nil:
				n++ // the lane's duplicate
			}
		}
	})
	return n
}

// UvtOpenedInLibuv reports whether c's event has a libuv handle, and
// UvtLazyOpens counts the connections accepted unopened and opened in
// libuv since.
func UvtOpenedInLibuv(c *IO) bool {
	var open bool
	c.e.r.Call(func() {
		if s, ok := c.e.t.(*uvStream); ok {
			open = s.h != 0
		}
	})
	return open
}

// UvtLazyOpens counts the connections opened in libuv after they were
// accepted unopened, in every reactor.
func UvtLazyOpens() int64 { return lazyOpens.Load() }

// UvtClosing reports whether r's Close has begun.
func UvtClosing(r *reactor.Reactor) bool { return kind.HostOf(r.Owner()).Closing() }

// UvtSockoptInt reads an integer socket option of c's descriptor.
func UvtSockoptInt(t *testing.T, c *IO, level, opt int) (int, error) {
	return unix.GetsockoptInt(fdOf(t, c), level, opt)
}

// UvtLoopLaneFiles counts the read lane files made on the loop, in every
// reactor.
func UvtLoopLaneFiles() int64 { return loopLaneFiles.Load() }

// UvtUnpolledLaneFiles makes the read lanes' files made until the test
// ends files Go's netpoller does not hold, as when it fails to take the
// descriptor: os.NewFile puts only a non-blocking descriptor in it, so
// the descriptor is made blocking for the call, and non-blocking again.
func UvtUnpolledLaneFiles(t testing.TB) {
	mk := func(fd int, name string) *os.File {
		unix.SetNonblock(fd, false)
		f := os.NewFile(uintptr(fd), name)
		unix.SetNonblock(fd, true)
		return f
	}
	laneFileMaker.Store(&mk)
	t.Cleanup(func() { laneFileMaker.Store(nil) })
}

// UvtParked returns how many Reads of c are parked on the loop.
func UvtParked(c *IO) int { return int(c.e.parked.Load()) }

// UvtAcceptNoLane is ln's Accept without the read lane's making, which it
// leaves to UvtBeginLaneMaking and UvtEndLaneMaking.
func UvtAcceptNoLane(ln *Listener) (*IO, error) {
	e := ln.e
	return e.accepts.wait(context.Background(), e.r, e.self, e.onAcceptFn)
}

// UvtBeginLaneMaking begins the making of c's read lane that the loop
// handed to its Accept, as Accept's goroutine does; false when the loop
// took it back.
func UvtBeginLaneMaking(c *IO) bool {
	return c.e.laneMaking.CompareAndSwap(laneMakingDue, laneMakingOn)
}

// UvtEndLaneMaking makes c's read lane, its making begun
// (UvtBeginLaneMaking).
func UvtEndLaneMaking(c *IO) { c.e.makeBegunLane() }

// UvtLaneMakingWaits counts the loop's yields to a read lane's making
// begun by Accept's goroutine, in every reactor.
func UvtLaneMakingWaits() int64 { return laneMakingWaits.Load() }

// UvtFDOf returns c's descriptor (an unopened connection's socket on the
// libuv driver), read on the loop.
func UvtFDOf(t *testing.T, c *IO) int { return fdOf(t, c) }

// UvtLoopSetups counts the accepted connections' setups (TCP_NODELAY, the
// local address) made on the loop, in every reactor.
func UvtLoopSetups() int64 { return loopSetups.Load() }

// UvtUDPState describes u's receiving side, read on the loop: the lane's
// state, the datagrams kept, the ReadFroms parked, and whether it
// receives and is started.
func UvtUDPState(u *UDP) string {
	var s string
	u.e.r.Call(func() {
		s = fmt.Sprintf("lane=%s kept=%d readers=%d receiving=%v started=%v", UvtUDPLane(u), len(u.e.kept), len(u.e.readers), u.e.receiving, u.e.started)
	})
	return s
}

// UvtUDPSettledOnLoop reports, on the loop (from UvtOnUDPLaneOpen's
// function), that u keeps no datagram and its driver has none read still
// to deliver.
func UvtUDPSettledOnLoop(u *UDP) bool { return len(u.e.kept) == 0 && u.e.drv.readsSettled() }

// UvtGiveUDPLane makes u's read lane as its first ReadFrom reaching the
// loop does, with no ReadFrom (the conformance table's row of a UDP with
// a lane).
func UvtGiveUDPLane(u *UDP) error {
	return u.e.r.Call(func() {
		u.e.makeLane()
		u.e.update()
	})
}

// UvtOnUDPLaneOpen runs f on the loop each time a UDP's read lane opens,
// until the test ends.
func UvtOnUDPLaneOpen(t testing.TB, f func()) {
	udpLaneOpened = f
	t.Cleanup(func() { udpLaneOpened = nil })
}
