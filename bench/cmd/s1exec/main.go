// Command s1exec is the Go standard-library comparator for workload S1: it
// spawns /bin/true children with os/exec and waits for each, at most
// -inflight at a time, from as many goroutines.
//
// It prints one result line, counted as bench/c/s1_spawn.c counts:
//
//	S1 go-exec children_per_s=N cpu_us_per_child=X child_cpu_us_per_child=Y
//
// children_per_s is over the wall clock from the first spawn to the last
// exit; cpu_us_per_child is this process's own user plus system CPU time
// over the run (RUSAGE_SELF: the spawning and the waiting) divided by the
// children; child_cpu_us_per_child is the children's own (RUSAGE_CHILDREN),
// likewise. Children get /dev/null for stdin, stdout and stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/uvevent/uvevent/bench/internal/cputime"
	"github.com/uvevent/uvevent/bench/internal/inflight"
)

func main() {
	n := flag.Int("n", 1000, "children to spawn")
	inFlight := flag.Int("inflight", 32, "children running at once")
	flag.Parse()
	if *n <= 0 || *inFlight <= 0 {
		fmt.Fprintln(os.Stderr, "s1exec: -n and -inflight must be positive")
		os.Exit(2)
	}

	self0, children0 := cputime.Self(), cputime.Children()
	start := time.Now()
	err := inflight.Run(*n, *inFlight, func() error { return exec.Command("/bin/true").Run() })
	wall := time.Since(start)
	self, children := cputime.Self()-self0, cputime.Children()-children0
	if err != nil {
		fmt.Fprintln(os.Stderr, "s1exec: /bin/true:", err)
		os.Exit(1)
	}
	fmt.Printf("S1 go-exec children_per_s=%d cpu_us_per_child=%.1f child_cpu_us_per_child=%.1f\n",
		int64(*n)*int64(time.Second)/int64(wall),
		float64(self.Microseconds())/float64(*n), float64(children.Microseconds())/float64(*n))
}
