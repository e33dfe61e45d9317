package eventkind_test

import (
	"fmt"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/eventkind"
)

// A countdown is a kind of event written outside the module: it notifies
// on each Tick while started and completes (closing) at zero.
type countdown struct {
	event.Base
	owner event.Owner
	left  int
}

type countdownOps countdown

func newCountdown(o event.Owner, n int) *countdown {
	c := &countdown{owner: o, left: n}
	eventkind.Init(&c.Base, (*countdownOps)(c), true, event.GoOwned)
	return c
}

// Tick counts one down; it runs with the owner held.
func (c *countdown) Tick() {
	c.owner.Call(func() {
		if eventkind.LoopRefs(c) == 0 || c.Flags().Has(event.Closed) {
			return
		}
		if c.left--; c.left == 0 {
			eventkind.Complete(&c.Base, "lift-off", nil)
			return
		}
		eventkind.Notify(&c.Base, c.left, nil)
	})
}

func (o *countdownOps) Owner() event.Owner { return o.owner }
func (o *countdownOps) Event() event.Event { return (*countdown)(o) }
func (o *countdownOps) Arm() error         { return nil }
func (o *countdownOps) Disarm()            {}
func (o *countdownOps) Free(bool)          {}
func (o *countdownOps) Describe() string   { return fmt.Sprintf("Countdown(left=%d)", o.left) }

func ExampleInit() {
	var s event.Serial
	c := newCountdown(&s, 3)
	event.Subscribe(c, func(_ event.Event, v any, _ error) { fmt.Println(v) })
	c.Start()
	for range 3 {
		c.Tick()
	}
	fmt.Println(c.Info(), event.StateOf(c))
	// Output:
	// 2
	// 1
	// lift-off
	// Countdown(left=0) closed
}
