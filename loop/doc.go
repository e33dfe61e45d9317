// Package loop is a compact event-loop interface over a uvevent reactor:
// timers by id, readiness of descriptors, signals, Run and Stop, and a
// suspension that parks a goroutine until a callback resumes it.
//
//	l, _ := loop.New(loop.Options{})
//	defer l.Close()
//	id, _ := l.Repeat(time.Second, func() { fmt.Println("tick") })
//	l.Delay(5*time.Second, func() { l.OffRepeat(id) })
//	l.Run(ctx)
//
// # The interface
//
// Timers: Delay (one-shot) and Repeat (periodic) return a DelayID and a
// RepeatID, two distinct types, so an id of one kind cannot be given to the
// other's Off; OffDelay and OffRepeat report whether they removed a timer;
// DeleteAllTimers and TimerCount see only the timers made through the
// interface. Durations are time.Duration; a timer never fires early.
//
// Descriptors: OnReadable and OnWritable call back, level-triggered, while
// a descriptor is ready; OffReadable and OffWritable report whether a
// callback was removed. Stream builds EventInterface's connection (TcpConnection) on them: reads
// of up to 64 KiB at a time, writes that go out when the descriptor is
// writable, the rest buffered (Buffered shows the backpressure, OnDrain
// says when it is gone).
//
// Signals: OnSignal and OffSignal, through uv.Signal (os/signal
// underneath, never libuv's handlers). A watched signal keeps Run going
// until OffSignal, unless watched with the option Unref (as Node's signal
// listeners).
//
// Control: Run drives the loop until nothing is left that can happen, Stop
// ends it; Suspension gives an async.Suspension.
//
// # Built on the events
//
// Each registration is an ordinary event of the reactor: a reactor.Timer
// for Delay and Repeat, a uv.PollProxy (one uv.Poll per descriptor, a proxy
// per direction) for OnReadable and OnWritable, a uv.Signal for OnSignal,
// an event.Future inside async.Suspension. So they count in Stats, show their
// Info in deadlock reports, keep Run going while they are active, and are
// closed by the reactor's Close. Loop.Reactor gives the reactor for every
// other kind (processes, file watches, channels, coroutines).
//
// # Drivers
//
// New takes the driver from Options.ReactorOptions.Driver: libuv when the
// program is built with cgo (reactor.DriverAuto, the default, or
// DriverLibuv), the pure-Go driver when it is built with CGO_ENABLED=0 or
// asked for (DriverGo). The interface behaves the same on both; one test
// suite runs against each. The events it is built on work on both drivers:
// on the pure-Go one a reactor's uv.Poll events are level-triggered members
// of an epoll set of its own, which the loop goroutine waits on itself,
// handling one pass over what is ready at a time.
//
// # Threading
//
// Every method is safe from any goroutine: it runs on the loop
// (reactor.Call), at once from a callback. Callbacks run on the loop
// goroutine, one at a time, and must not block: hand blocking work to
// uv.QueueTask or reactor.Go.
package loop
