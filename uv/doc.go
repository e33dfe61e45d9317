// Package uv holds the libuv-backed event kinds, one file each: Timer,
// Trigger, and (in later waves) poll, signal, process, fs event, dns, exec,
// listen, task, thread and io.
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
// through the reactor's id table, and dropping it without Close is safe —
// the collector queues the close on the loop goroutine, and the handle is
// freed in libuv's close callback on the next loop turn (the next Run,
// RunOnce or Close when no loop runs). Close as soon as you are done all the
// same: the collector runs when it likes. A callback that captures its own
// reference keeps it reachable, so it is never collected: in callbacks, use
// the event they are given.
//
// # Descriptors, files and names
//
// Poll watches a descriptor for readiness; PollProxy shares one Poll among
// several subscribers, each with its own events, the poll asking libuv for
// the union of the started proxies' events. FSEvent watches a file or a
// directory (recursively, emulated on Linux with a watch per directory).
// AddrInfo and NameInfo are getaddrinfo and getnameinfo lookups on libuv's
// thread pool, as one-shot request events whose results are stored and
// replayed; their errors match the Err* values of the EAI_* codes. What C
// hands over (a file name, an address list) is copied to Go while its
// record is delivered; results never point into C memory. docs/kinds.md
// says what each kind promises.
//
// Timers are Go-owned (no C memory): they live on the reactor's timer wheel,
// which is why Timer is defined in package reactor.
package uv
