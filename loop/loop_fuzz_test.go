package loop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/uvevent/uvevent/loop"
	"github.com/uvevent/uvevent/reactor"
)

// loopModel is the reference for the interface's timers and descriptor
// callbacks: which ids are pending, which fds are watched in which
// direction. Firings are checked against it as they happen.
type loopModel struct {
	delays  map[loop.DelayID]delayState
	repeats map[loop.RepeatID]bool // live
	read    bool                   // OnReadable registered
	write   bool                   // OnWritable registered
}

type delayState struct {
	pending bool // made, not fired, not removed
	fired   int
	due     time.Time // never fires before
}

func (m *loopModel) timerCount() int {
	n := 0
	for _, d := range m.delays {
		if d.pending {
			n++
		}
	}
	for _, live := range m.repeats {
		if live {
			n++
		}
	}
	return n
}

// loopFuzz plays one input: top-level operations, and in each callback the
// next byte decides what the callback does to the interface.
type loopFuzz struct {
	t       *testing.T
	l       *loop.Loop
	fd      [2]int
	data    []byte
	m       loopModel
	delayIx []loop.DelayID
	rptIx   []loop.RepeatID
	unread  bool // bytes written to the peer and not read
}

func (f *loopFuzz) next() (byte, bool) {
	if len(f.data) == 0 {
		return 0, false
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b, true
}

func (f *loopFuzz) delay(arg byte) {
	d := time.Duration(arg%4) * time.Millisecond
	var id loop.DelayID
	due := time.Now().Add(d)
	id, err := f.l.Delay(d, func() {
		s := f.m.delays[id]
		if !s.pending {
			f.t.Errorf("%v fired while not pending (fired %d times before)", id, s.fired)
		}
		if now := time.Now(); now.Before(s.due) {
			f.t.Errorf("%v fired %v early", id, s.due.Sub(now))
		}
		s.pending = false
		s.fired++
		f.m.delays[id] = s
		f.inCallback()
	})
	if err != nil {
		f.t.Fatalf("Delay(%v): %v", d, err)
	}
	f.m.delays[id] = delayState{pending: true, due: due}
	f.delayIx = append(f.delayIx, id)
}

func (f *loopFuzz) repeat(arg byte) {
	d := time.Duration(arg%3+1) * time.Millisecond
	var id loop.RepeatID
	id, err := f.l.Repeat(d, func() {
		if !f.m.repeats[id] {
			f.t.Errorf("%v fired after it was removed", id)
		}
		f.inCallback()
	})
	if err != nil {
		f.t.Fatalf("Repeat(%v): %v", d, err)
	}
	f.m.repeats[id] = true
	f.rptIx = append(f.rptIx, id)
}

func (f *loopFuzz) offDelay(arg byte) {
	if len(f.delayIx) == 0 {
		return
	}
	id := f.delayIx[int(arg)%len(f.delayIx)]
	s := f.m.delays[id]
	if got := f.l.OffDelay(id); got != s.pending {
		f.t.Errorf("OffDelay(%v) = %v, model says pending=%v", id, got, s.pending)
	}
	s.pending = false
	f.m.delays[id] = s
}

func (f *loopFuzz) offRepeat(arg byte) {
	if len(f.rptIx) == 0 {
		return
	}
	id := f.rptIx[int(arg)%len(f.rptIx)]
	if got := f.l.OffRepeat(id); got != f.m.repeats[id] {
		f.t.Errorf("OffRepeat(%v) = %v, model says live=%v", id, got, f.m.repeats[id])
	}
	f.m.repeats[id] = false
}

func (f *loopFuzz) deleteAll() {
	f.l.DeleteAllTimers()
	for id, s := range f.m.delays {
		s.pending = false
		f.m.delays[id] = s
	}
	for id := range f.m.repeats {
		f.m.repeats[id] = false
	}
}

func (f *loopFuzz) onReadable() {
	err := f.l.OnReadable(f.fd[0], func(fd int) {
		if !f.m.read {
			f.t.Errorf("readable callback after OffReadable")
		}
		if !f.unread {
			f.t.Errorf("readable callback with nothing to read")
		}
		var b [512]byte
		for {
			if n, _ := unix.Read(fd, b[:]); n <= 0 {
				break
			}
		}
		f.unread = false
		f.inCallback()
	})
	if err != nil {
		f.t.Fatalf("OnReadable: %v", err)
	}
	f.m.read = true
}

func (f *loopFuzz) onWritable() {
	err := f.l.OnWritable(f.fd[0], func(int) {
		if !f.m.write {
			f.t.Errorf("writable callback after OffWritable")
		}
		f.inCallback()
	})
	if err != nil {
		f.t.Fatalf("OnWritable: %v", err)
	}
	f.m.write = true
}

func (f *loopFuzz) offReadable() {
	if got := f.l.OffReadable(f.fd[0]); got != f.m.read {
		f.t.Errorf("OffReadable = %v, model says watched=%v", got, f.m.read)
	}
	f.m.read = false
}

func (f *loopFuzz) offWritable() {
	if got := f.l.OffWritable(f.fd[0]); got != f.m.write {
		f.t.Errorf("OffWritable = %v, model says watched=%v", got, f.m.write)
	}
	f.m.write = false
}

// op runs operation op with argument arg, from the top level or from a
// callback.
func (f *loopFuzz) op(op, arg byte) {
	switch op % 10 {
	case 0:
		f.delay(arg)
	case 1:
		f.repeat(arg)
	case 2:
		f.offDelay(arg)
	case 3:
		f.offRepeat(arg)
	case 4:
		f.deleteAll()
	case 5:
		f.onReadable()
	case 6:
		f.onWritable()
	case 7:
		f.offReadable()
	case 8:
		f.offWritable()
	case 9:
		unix.Write(f.fd[1], []byte{arg})
		f.unread = true
	}
}

func (f *loopFuzz) inCallback() {
	op, ok := f.next()
	if !ok {
		return
	}
	arg, _ := f.next()
	if op%16 < 10 {
		f.op(op, arg)
	}
}

func (f *loopFuzz) check(step string) {
	if got, want := f.l.TimerCount(), f.m.timerCount(); got != want {
		f.t.Errorf("%s: TimerCount = %d, model says %d", step, got, want)
	}
}

func runLoopFuzz(t *testing.T, d reactor.Driver, data []byte) {
	l, err := loop.New(loop.Options{ReactorOptions: reactor.Options{Driver: d}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fd, err := unixSocketpair()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd[0])
	defer unix.Close(fd[1])
	f := &loopFuzz{t: t, l: l, fd: fd, data: data,
		m: loopModel{delays: map[loop.DelayID]delayState{}, repeats: map[loop.RepeatID]bool{}}}
	for step := 0; len(f.data) >= 2 && !t.Failed(); step++ {
		op, _ := f.next()
		arg, _ := f.next()
		if op%16 >= 10 { // a turn, bounded: its bound decides nothing
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(arg%3)*time.Millisecond)
			err := l.Reactor().RunOnce(ctx)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("step %d: RunOnce: %v", step, err)
			}
		} else {
			f.op(op, arg)
		}
		f.check(fmt.Sprintf("step %d (op %d, arg %d)", step, op%16, arg))
	}
	// The end: with the repeats and the watches removed, Run returns once
	// every pending delay has fired, each exactly once.
	f.data = nil
	for id := range f.m.repeats {
		l.OffRepeat(id)
		f.m.repeats[id] = false
	}
	l.OffReadable(fd[0])
	l.OffWritable(fd[0])
	f.m.read, f.m.write = false, false
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	defer cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatalf("final Run: %v", err)
	}
	for id, s := range f.m.delays {
		if s.pending {
			t.Errorf("%v still pending after Run returned", id)
		}
		if s.fired > 1 {
			t.Errorf("%v fired %d times", id, s.fired)
		}
	}
	f.check("end")
	r := l.Reactor()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if s := r.Stats(); s.CHandles != 0 || len(s.Handles) != 0 || s.Timers != 0 {
		t.Errorf("after Close: CHandles=%d Handles=%v Timers=%d", s.CHandles, s.Handles, s.Timers)
	}
}

// FuzzLoop plays random sequences of the interface's calls (Delay, Repeat,
// OffDelay, OffRepeat, DeleteAllTimers, OnReadable, OnWritable, Off*),
// from the top and from inside callbacks, with loop turns between, on each
// driver, against loopModel: return values, TimerCount, no call after an
// Off, no early timer, every delay fired exactly once by the end, and no
// handle left after Close.
func FuzzLoop(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 1, 10, 1, 10, 2, 3, 0, 10, 0})         // a delay, a repeat, turns, off
	f.Add([]byte{0, 2, 2, 0, 2, 0, 10, 2, 4, 0})                 // off twice, then delete all
	f.Add([]byte{5, 0, 9, 7, 10, 1, 7, 0, 9, 1, 10, 1})          // readable, read, off, write again
	f.Add([]byte{6, 0, 10, 0, 3, 0, 8, 0, 8, 0, 10, 1})          // writable: its callback removes nothing
	f.Add([]byte{1, 0, 10, 2, 3, 0, 10, 2, 4, 0, 10, 2, 0, 1})   // callbacks off their own repeat
	f.Add([]byte{0, 0, 0, 0, 0, 1, 10, 2, 4, 0, 4, 0, 2, 1, 10}) // callbacks that delete all
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		for _, d := range drivers {
			r, err := reactor.New(reactor.Options{Driver: d})
			if errors.Is(err, reactor.ErrNoLibuv) {
				continue
			}
			r.Close()
			runLoopFuzz(t, d, data)
			if t.Failed() {
				t.Fatalf("on the %v driver", d)
			}
		}
	})
}
