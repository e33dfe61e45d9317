// Package uv holds the libuv-backed event kinds, one file each: Timer,
// Trigger, Listener (listen), IO (TCP, Unix domain sockets and pipes,
// terminals), UDP and File (I/O; docs/io.md tells their buffers' validity,
// backpressure and net.Conn semantics), and (in later waves) poll, signal,
// process, fs event, dns, exec, task and thread.
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
// Timers are Go-owned (no C memory): they live on the reactor's timer wheel,
// which is why Timer is defined in package reactor.
package uv
