//go:build !gc || race

package reactor

// A signal passes the baton to one goroutine (see signal.go). Under the
// race detector it is a channel of capacity one: gopark's commit cannot
// run an instrumented atomic on the scheduler's stack, and the channel
// gives the detector the order the baton makes.
type signal struct{ c chan bool }

func (s *signal) init() { s.c = make(chan bool, 1) }

func (s *signal) put(v bool) {
	select {
	case s.c <- v:
	default:
		panic("reactor: the baton given twice")
	}
}

func (s *signal) take() bool { return <-s.c }
