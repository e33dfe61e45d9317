// Package serverstats lets a Go server under bench/ report its heap
// allocations to the load generator that started it (bench/cmd/e1load,
// through bench/internal/serverproc): Ready prints the server's ready line
// with the word "stats" after the address, and from then on every SIGUSR1
// makes the server print one line "stats mallocs=N" on its stdout, N being
// the heap allocations it has made so far (runtime/metrics, tiny ones
// included; reading them does not stop the world).
package serverstats

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/metrics"
	"syscall"
)

// Ready starts answering SIGUSR1 and prints "listening ADDR stats".
func Ready(addr string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			fmt.Printf("stats mallocs=%d\n", Mallocs())
		}
	}()
	fmt.Printf("listening %s stats\n", addr)
}

// Mallocs returns the heap allocations this process has made so far, tiny
// ones (many small objects in one block) counted one by one.
func Mallocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}
