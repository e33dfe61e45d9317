// Command x1chan is the Go comparator for workload X1: round-trip latency of
// a ping-pong between two goroutines over unbuffered channels.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 200000, "number of round trips")
	flag.Parse()
	if *n <= 0 {
		fmt.Fprintln(os.Stderr, "x1chan: -n must be positive")
		os.Exit(1)
	}

	ping := make(chan int)
	pong := make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()

	start := time.Now()
	for i := range *n {
		ping <- i
		if got := <-pong; got != i {
			fmt.Fprintf(os.Stderr, "x1chan: round %d echoed %d\n", i, got)
			os.Exit(1)
		}
	}
	elapsed := time.Since(start)
	close(ping)
	<-pong

	fmt.Printf("X1 go-chan rtt_ns=%d rounds=%d\n", elapsed.Nanoseconds()/int64(*n), *n)
}
