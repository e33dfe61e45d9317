package reactor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
)

// A loop that stalls for 2³² ms (49.7 days) or more between two advances
// still knows the due of every timer it fires, and of every timer left in
// the ready queue, although a timer keeps only the low 32 bits of its due:
// a slot's timer fires with the cursor at its due, an old ready one with
// its due just before the cursor, and a timer made ready while the stalled
// advance fires is due at that advance's now. The stalls are 2³² ms give
// or take the distance to the due, where the low bits alias.
func TestWheelDueOfAcrossStallOf2To32ms(t *testing.T) {
	for _, start := range []int64{1000, 1<<31 - 3, 1<<32 - 5, 7 << 32} {
		for _, stall := range []int64{1<<32 - 1, 1 << 32, 1<<32 + 1, 1<<32 + 10, 1<<32 + 11, 1<<32 + 5000, 1<<33 + 7, 3<<32 + 123} {
			name := fmt.Sprintf("start=%d stall=%d", start, stall)
			g := newWheelRig()
			g.advance(start) // cursor start+1
			g.insert("ready1", start)
			g.insert("ready2", start)
			g.insert("slot", start+10)
			g.insert("slot2", start+wheelSize-1)
			now := start + stall
			got := map[string]int64{}
			g.onFire = func(x *Timer) {
				n := g.names[x]
				got[n] = g.w.dueOf(x)
				switch n {
				case "ready1":
					// ready2 is still queued, from before this advance;
					// "late" joins the ready queue, due at this now.
					got["ready2 queued"] = g.w.dueOf(g.timer("ready2"))
					g.insert("late", now)
					got["late queued"] = g.w.dueOf(g.timer("late"))
				case "slot":
					got["late queued from a slot"] = g.w.dueOf(g.timer("late"))
					g.insert("late2", now)
					got["late2 queued"] = g.w.dueOf(g.timer("late2"))
				}
			}
			g.advance(now)
			want := map[string]int64{
				"ready1": start, "ready2": start, "slot": start + 10, "slot2": start + wheelSize - 1,
				"ready2 queued": start, "late queued": now, "late queued from a slot": now, "late2 queued": now,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: dues (-want +got):\n%s", name, diff)
			}
			if d := g.w.dueOf(g.timer("late")); d != now {
				t.Errorf("%s: after the advance, a ready timer's dueOf = %d, want %d", name, d, now)
			}
			g.onFire = nil
			if fired := g.advance(now + 1); !cmp.Equal(fired, []string{"late", "late2"}) {
				t.Errorf("%s: then fired %v", name, fired)
			}
			g.check(t, 0)
		}
	}
}

// A periodic timer keeps its schedule (NewTimer: the n-th firing due
// timeout+(n-1)×repeat after Start) when its loop stalls for more than
// 2³² ms, which a timer's 32-bit due cannot tell from a shorter stall: the
// firing after the stall is the first on the schedule not before the
// stall's end. On both drivers; the clock jumps by moving the epoch, so
// no timing decides the verdict.
func TestTimerRepeatingScheduleAcrossStallOf2To32ms(t *testing.T) {
	for _, d := range []Driver{DriverGo, DriverLibuv} {
		for _, p := range []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 7*time.Millisecond + 1} {
			t.Run(fmt.Sprintf("%v/repeat=%v", d, p), func(t *testing.T) {
				r, err := New(Options{Driver: d})
				if errors.Is(err, ErrNoLibuv) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				stall := 1<<32*time.Millisecond + time.Second
				var first, next, jumpedTo int64
				var tm *Timer
				tm = timerTestNew(t, r, 10*time.Millisecond, p, func(_ event.Event, _ any, err error) {
					if err != nil || next != 0 {
						return
					}
					next = r.timers.dueOf(tm)
					tm.Stop()
				})
				timerTestStart(t, tm)
				r.Call(func() {
					first = r.timers.dueOf(tm)
					jumpClock(r, stall)
					jumpedTo = r.dueAfter(0)
				})
				timerTestRun(t, r)
				per := ms(p)
				if next < jumpedTo || (next-first)%per != 0 || next-first > ms(stall)+2*per+1000 {
					t.Errorf("first due %d, stall to %d: next due %d (%+d ms off the schedule of %d ms); want on the schedule, not before the stall's end", first, jumpedTo, next, (next-first)%per, per)
				}
				tm.Close()
			})
		}
	}
}

// SetRepeat never writes the conf every one-shot timer of the reactor
// shares, whatever the timer's state (never started, started, stopped,
// fired, closed) and whatever it was made with, and Repeat gives back the
// last interval set; a timer that has repeated keeps a conf of its own.
func TestTimerSetRepeatNeverTouchesSharedConf(t *testing.T) {
	r := timerTestReactor(t, Options{})
	states := []string{"created", "started", "stopped", "fired", "closed"}
	seqs := [][]time.Duration{{0}, {5 * time.Second}, {5 * time.Second, 0}, {0, 3 * time.Second, 0, 4 * time.Second}, {time.Hour, time.Hour, 0, 0}}
	for _, made := range []time.Duration{0, 2 * time.Second} {
		for _, st := range states {
			for _, seq := range seqs {
				name := fmt.Sprintf("made repeat=%v, %s, SetRepeat %v", made, st, seq)
				tm := timerTestNew(t, r, time.Millisecond, made, nil)
				switch st {
				case "started":
					timerTestStart(t, tm)
				case "stopped":
					timerTestStart(t, tm)
					tm.Stop()
				case "fired":
					tm.Reset(0)
					if made != 0 {
						tm.SetRepeat(0)
					}
					timerTestRun(t, r)
					if made != 0 {
						tm.SetRepeat(made)
					}
				case "closed":
					tm.Close()
				}
				own := tm.conf() != &r.oneShot
				for _, rep := range seq {
					if err := tm.SetRepeat(rep); err != nil {
						t.Fatalf("%s: SetRepeat(%v): %v", name, rep, err)
					}
					own = own || rep != 0
					if r.oneShot != (timerConf{r: r}) {
						t.Fatalf("%s: the shared conf became %+v", name, r.oneShot)
					}
					if got := tm.Repeat(); got != rep {
						t.Errorf("%s: Repeat = %v after SetRepeat(%v)", name, got, rep)
					}
					if (tm.conf() != &r.oneShot) != own || tm.conf().r != r {
						t.Errorf("%s: own conf %v, want %v (reactor %p)", name, tm.conf() != &r.oneShot, own, tm.conf().r)
					}
				}
				tm.Close()
			}
		}
	}
}
