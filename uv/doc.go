// Package uv holds the event kinds of the libuv model, one file each:
// Trigger, Phase (prepare, check, idle), Poll and PollProxy, Signal, Process,
// Command, Task, Thread, FSEvent, FSPoll, AddrInfo and NameInfo, Listener (listen), IO
// (TCP, Unix domain sockets and pipes, terminals), UDP and File (I/O;
// docs/io.md tells their buffers' validity, backpressure and net.Conn
// semantics), and IPC (an IPC pipe that passes connections and listeners
// to another process, such as a child started with ProcessOptions.IPC).
//
// Every kind is an event.Event: subscribe with AddCallback (or
// event.Subscribe), Start, Stop, Close, Dispose, Info, Flags, and wait on any
// mix of kinds with event.Await. Every method is safe from any goroutine;
// callbacks run on the reactor's loop goroutine.
//
// # Lifetime
//
// Kinds whose memory is C-owned (a libuv handle, such as Trigger) are given
// to users as event references: the object you hold reaches its handle
// through the reactor's id table. A started event (or one with a request in
// flight) is held by its reactor until Stop, Close or the reactor's Close,
// whether or not the program still points at it, as in libuv and Node: a
// listener, connection or watch set up in a helper function keeps serving.
// Dropping a stopped one without Close is safe — the collector queues the
// close on the loop goroutine, and the handle is freed in libuv's close
// callback on the next loop turn (the next Run, RunOnce or Close when no
// loop runs). Close as soon as you are done all the same: the collector
// runs when it likes. Every kind has SetHidden (libuv's uv_unref, Node's
// unref()): a hidden started event does not keep Run going. A callback that captures its own
// reference keeps it reachable, so it is never collected: in callbacks, use
// the event they are given.
//
// # Two drivers
//
// On the pure-Go driver (reactor.DriverGo, or any build without cgo) the
// same constructors make Go-owned events with the same methods, results,
// errors and lifetime: polls, Listener, IO (TCP, Unix domain sockets,
// pipes, terminals), UDP and File among them. Sockets are members of an
// epoll set of the reactor's own, which the loop goroutine waits on itself
// as libuv's loop does (no goroutine in between), and are read into pooled
// Go buffers; they count in Stats().Handles as libuv's handles do. FSEvent
// keeps libuv's inotify semantics, with one inotify descriptor per reactor
// in the same epoll set. Phase hooks run in libuv's order in each of the
// pure-Go loop's iterations (Phase says where). AddrInfo and NameInfo run
// on Go's resolver there. Every kind works on either driver.
//
// # Descriptors, files and names
//
// Poll watches a descriptor for readiness; PollProxy shares one Poll among
// several subscribers, each with its own events, the poll polling for the
// union of the started proxies' events. Both work on either driver: on the
// pure-Go one, a reactor's polls are members of an epoll set of its own,
// which the loop goroutine waits on. FSEvent watches a file or a
// directory (recursively, emulated on Linux with a watch per directory);
// FSPoll watches a path by stat every interval, for file systems inotify
// cannot see.
// AddrInfo and NameInfo are getaddrinfo and getnameinfo lookups, as
// one-shot request events whose results are stored and replayed; their
// errors match the Err* values of the EAI_* codes. They run on Go's
// resolver in a goroutine per lookup on both drivers, never on libuv's
// thread pool, so that a nameserver that never answers holds up no other
// lookup, no file request and no reactor Close (a DNSError's Err holds
// Go's own error). What C hands over (a file name, a read buffer)
// is copied to Go while its record is delivered; results never point into
// C memory. FSEvent, FSPoll and File work on either driver too (File's operations
// run on libuv's thread pool, or on DefaultTaskPool's goroutines).
// docs/kinds.md says what each kind promises.
//
// The timer is not here: it is Go-owned (no C memory) and lives on the
// reactor's timer wheel, so it is reactor.Timer, made by Reactor.NewTimer.
//
// # System events without libuv handles
//
// Signal, Process, Command, Task and Thread are Go-owned too: their work
// happens in goroutines (os/signal's relay, a child's watcher, a pool
// worker, a locked thread) and reaches the loop through Reactor.Post (a
// signal's arrival is queued for the next turn), so their callbacks run
// with the loop owned like every other kind's.
//
//   - Signal delivers POSIX signals through os/signal, never through
//     uv_signal_t, whose handlers lack SA_ONSTACK and are unsafe in a Go
//     process; deliveries coalesce. See docs/signals.md.
//   - Process starts children with syscall.ForkExec and waits for them on a
//     pidfd in the netpoller, reaping by pid: no SIGCHLD handler, and
//     os/exec elsewhere in the program is unaffected. Its standard streams
//     can be loop streams (StdioLoop: an *IO, read line by line with
//     ReadLines); Group, Terminate (SIGTERM, then SIGKILL after a grace
//     period), KillGroup, a Context and KillOnClose end it and what it
//     started. Command runs a shell command on top of it, its output captured
//     as lines or whole, or streamed by line or raw (OutputMode).
//   - Task runs blocking work on a bounded pool of goroutines (libuv's
//     thread pool model: 4 workers unless UV_THREADPOOL_SIZE says
//     otherwise), not on libuv's pool: a libuv worker thread would have to
//     call back into Go from a thread Go did not make, on every completion,
//     where a goroutine hands its result to the loop with one Post
//     (docs/benchmarks.md has the figures beside libuv's pool). A bounded
//     pool keeps the meaning of libuv's uv_cancel: work that has not
//     started can be taken back.
//   - Thread runs a function on an OS thread of its own.
//
// Process, Command, Task and Thread are one-shot: they are started when made,
// count as active until they end (Run waits for them; Stop makes one no
// longer count), complete with their result, and replay it to subscribers
// that come later. Such an event can end before a subscription made after
// it was created: event.Subscribe and event.Await then replay the result (a
// bare AddCallback returns ErrClosed; Replay gives the result). To subscribe before
// anything can be delivered, create and subscribe inside Reactor.Call (or a
// callback): deliveries wait until the loop is let go.
//
// The reactor's Close closes every one of these events that was ever
// started and is not closed yet (each registers with it at its first Start
// and holds itself there only weakly): its subscribers hear
// event.ErrClosed, as for any kind. What runs behind it is handled as by
// the event's own Close: a queued Task is taken back, a running Task's or
// Thread's context is cancelled, a Command's command gets SIGTERM and later
// SIGKILL (and the reactor's Close waits until it is gone), a Process's
// child is left running and still reaped when it ends (unless KillOnClose:
// then it is ended as a Command's command is), and a Signal gives its signal
// back.
//
// # Nil and zero values
//
// A nil pointer to a kind (var p *IO) is no kind: a method called on it may
// panic, as (*net.TCPConn)(nil).Read does. Nil and zero input is refused
// with a clear error, never a panic: a nil argument (a nil reactor,
// callback, buffer or context) and a kind's zero value (&IO{}, not made by
// a constructor). A method with an error returns one matching
// event.ErrNilEvent (or reactor.ErrZeroReactor, or syscall.EINVAL for a bad
// argument); one without does nothing and returns zero values (Flags is 0,
// Object nil; Info describes the missing event).
package uv
