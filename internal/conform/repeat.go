package conform

import "sync"

// RepeatUntil calls f over and over on a goroutine of its own, counted in
// wg, until stop is closed: the hammering side of a race test.
func RepeatUntil(wg *sync.WaitGroup, stop <-chan struct{}, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				f()
			}
		}
	}()
}
