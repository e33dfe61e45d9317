package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/uvevent/uvevent/reactor"
)

// served counts the requests handled, for -stats.
var served atomic.Int64

// printStats writes to w, every second, what the last second's requests
// cost each: heap allocations and bytes, goroutines made, and, over
// uv.Listener (r not nil), the functions queued to the reactor's loop, its
// turns and its wake-ups (Stats). Counts hold on a loaded machine where
// times do not: an A/B of the server's work per request reads them.
func printStats(w io.Writer, r *reactor.Reactor) {
	names := []string{"/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/sched/goroutines-created:goroutines"}
	s := make([]metrics.Sample, len(names))
	for i := range s {
		s[i].Name = names[i]
	}
	var prev [3]uint64
	var prevStats reactor.Stats
	var prevReqs int64
	for i := 0; ; i++ {
		metrics.Read(s)
		n := served.Load()
		var st reactor.Stats
		if r != nil {
			st = r.Stats()
		}
		if d := float64(n - prevReqs); i > 0 && d > 0 {
			per := func(a, b uint64) float64 { return float64(a-b) / d }
			fmt.Fprintf(w, "requests=%d allocs/req=%.2f bytes/req=%.0f goroutines/req=%.3f queued/req=%.3f turns/req=%.3f wakeups/req=%.3f\n",
				n-prevReqs, per(s[0].Value.Uint64(), prev[0]), per(s[1].Value.Uint64(), prev[1]), per(s[2].Value.Uint64(), prev[2]),
				per(st.Queued, prevStats.Queued), per(st.Iterations, prevStats.Iterations), per(st.Wakeups, prevStats.Wakeups))
		}
		for j := range s {
			prev[j] = s[j].Value.Uint64()
		}
		prevReqs, prevStats = n, st
		time.Sleep(time.Second)
	}
}
