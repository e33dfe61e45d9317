// Package inflight runs the jobs of the Go comparators that keep a fixed
// number of operations in flight (workloads S1 and D1).
package inflight

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Run calls job n times in all, from min(n, k) goroutines that each call it
// again as soon as it returns, so that k calls are in flight until fewer than
// k remain. It returns when every call has returned. After a call fails, no
// goroutine starts another; Run returns the errors joined. Run panics if n
// or k is not positive.
func Run(n, k int, job func() error) error {
	if n <= 0 || k <= 0 {
		panic("inflight.Run: n and k must be positive")
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		errs   []error
		wg     sync.WaitGroup
	)
	for range min(n, k) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && next.Add(1) <= int64(n) {
				if err := job(); err != nil {
					failed.Store(true)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
