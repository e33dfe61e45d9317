// Package counts takes the per-message counts that bench/cmd/e1load prints
// beside its times: a server process's context switches, read from /proc,
// and its system calls, counted by perf's syscall tracepoints when perf is
// present and permitted, else by strace -c -f, else not at all (with the
// reason). Counts hold on a noisy machine where times do not: a regression
// shows in them, not only in a ratio.
package counts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Switches returns the context switches, voluntary and not, made so far by
// the live threads of process pid: the sum over /proc/PID/task/*/status.
// A thread that exited takes its count with it; the servers measured keep
// their threads.
func Switches(pid int) (int64, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "status"))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, err
		}
		n, err := ParseStatusSwitches(string(b))
		if err != nil {
			return 0, fmt.Errorf("%s/%s/status: %w", dir, t.Name(), err)
		}
		sum += n
	}
	return sum, nil
}

// ParseStatusSwitches returns voluntary_ctxt_switches plus
// nonvoluntary_ctxt_switches from the text of a /proc status file; both
// lines must be there.
func ParseStatusSwitches(status string) (int64, error) {
	var sum int64
	found := 0
	for line := range strings.SplitSeq(status, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "voluntary_ctxt_switches" && key != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		sum += n
		found++
	}
	if found != 2 {
		return 0, errors.New("no voluntary_ctxt_switches and nonvoluntary_ctxt_switches lines")
	}
	return sum, nil
}
