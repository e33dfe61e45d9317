// Command s1 is uvevent's side of workload S1 (docs/benchmarks.md): spawn and
// wait for 1,000 /bin/true children through uv.Process, 32 in flight. The
// loop keeps the window full: each child's end, delivered on the loop
// goroutine, starts the next spawn. With -onloop the callback spawns on
// the loop goroutine itself (as a libuv program spawns from its exit
// callback); by default it hands the spawn to a goroutine, so that the
// loop is not blocked while fork and exec run and spawns overlap.
//
// It prints one result line, counted as bench/c/s1_spawn.c and
// bench/cmd/s1exec count:
//
//	S1 uvevent children_per_s=N cpu_us_per_child=X child_cpu_us_per_child=Y
//
// children_per_s is over the wall clock from the first spawn to the last
// exit; cpu_us_per_child is this process's own user plus system CPU time
// (RUSAGE_SELF: the spawning and the waiting) divided by the children;
// child_cpu_us_per_child is the children's own (RUSAGE_CHILDREN), the same
// for every spawner, printed as a check. Children get /dev/null for stdin,
// stdout and stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/uvevent/uvevent/bench/internal/cputime"
	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/reactor"
	"github.com/uvevent/uvevent/uv"
)

func main() {
	n := flag.Int("n", 1000, "children to spawn")
	inflight := flag.Int("inflight", 32, "children running at once")
	prog := flag.String("prog", "/bin/true", "program to run")
	onLoop := flag.Bool("onloop", false, "spawn on the loop goroutine")
	flag.Parse()
	if err := run(*n, *inflight, *prog, *onLoop); err != nil {
		fmt.Fprintln(os.Stderr, "s1:", err)
		os.Exit(1)
	}
}

func run(n, inflight int, prog string, onLoop bool) error {
	if n < 1 || inflight < 1 {
		return fmt.Errorf("-n and -inflight must be at least 1")
	}
	r, err := reactor.New(reactor.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	opts := uv.ProcessOptions{Args: []string{prog}}
	// spawned, done and failure are touched on the loop goroutine only.
	var spawned, done int
	var failure error
	var onExit event.CallbackFunc
	spawn := func() {
		p, err := uv.StartProcess(r, opts)
		r.Post(func() {
			if err != nil {
				failure = err
				return
			}
			// A child may have ended before this runs: its stored
			// result is replayed then.
			cb := event.NewCallback(onExit)
			if p.AddCallback(cb) != nil {
				p.Replay(cb)
			}
		})
	}
	next := func() { // on the loop
		if spawned == n || failure != nil {
			return
		}
		spawned++
		if onLoop {
			spawn()
			return
		}
		release, err := r.Hold() // Run must not end while a spawn is on its way
		if err != nil {
			failure = err
			return
		}
		go func() {
			defer release()
			spawn()
		}()
	}
	onExit = func(_ event.Event, res any, err error) {
		done++
		if err != nil || res != 0 {
			failure = fmt.Errorf("child ended with %v, %v", res, err)
			return
		}
		next()
	}
	self0, children0 := cputime.Self(), cputime.Children()
	start := time.Now()
	if err := r.Call(func() {
		for range min(inflight, n) {
			next()
		}
	}); err != nil {
		return err
	}
	if err := r.Run(context.Background()); err != nil {
		return err
	}
	wall := time.Since(start)
	self, children := cputime.Self()-self0, cputime.Children()-children0
	if failure != nil {
		return failure
	}
	if done != n {
		return fmt.Errorf("%d of %d children ended", done, n)
	}
	fmt.Printf("S1 uvevent children_per_s=%d cpu_us_per_child=%.1f child_cpu_us_per_child=%.1f\n",
		int64(n)*int64(time.Second)/int64(wall),
		float64(self.Microseconds())/float64(n), float64(children.Microseconds())/float64(n))
	return r.Close()
}
