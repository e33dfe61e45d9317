// Package cputime reads the CPU time (user plus system) that the benchmark
// programs under bench/ report, so that every implementation of a workload
// counts it the same way: this process (Self), its waited-for children
// (Children), or another running process (Process).
package cputime

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Self returns the user plus system CPU time used so far by this process,
// all threads included (getrusage RUSAGE_SELF).
func Self() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// Children returns the user plus system CPU time used by this process's
// children that have terminated and been waited for (getrusage
// RUSAGE_CHILDREN).
func Children() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(fmt.Sprintf("getrusage(%d): %v", who, err)) // who is one of two constants
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Process returns the user plus system CPU time used so far by the running
// process pid, all threads included, from /proc/PID/stat. Its resolution is
// one clock tick (usually 10 ms).
func Process(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parseStatTicks(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks()), nil
}

// parseStatTicks returns utime + stime, in clock ticks, from the contents
// of a /proc/PID/stat file. The command name (field 2) is in parentheses
// and may itself hold spaces and parentheses, so fields are counted from
// the last ')'.
func parseStatTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ")": field 3 (state) is rest[0]; utime and stime are fields 14
	// and 15.
	rest := strings.Fields(stat[i+1:])
	if len(rest) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(rest))
	}
	var sum int64
	for _, f := range rest[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("utime/stime field %q: %w", f, err)
		}
		sum += n
	}
	return sum, nil
}

// atClkTck is the auxiliary-vector key of the kernel's clock tick rate.
const atClkTck = 17

// clockTicks returns the tick rate /proc reports times in (USER_HZ), read
// from this process's auxiliary vector, or 100 (its value on every common
// Linux platform) when that cannot be read.
func clockTicks() int64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 100
	}
	if hz := auxvValue(b, atClkTck); hz > 0 {
		return int64(hz)
	}
	return 100
}

// auxvValue returns the value of key in an auxiliary vector of native-endian
// 64-bit pairs, or 0 when key is absent.
func auxvValue(auxv []byte, key uint64) uint64 {
	for ; len(auxv) >= 16; auxv = auxv[16:] {
		k := binary.NativeEndian.Uint64(auxv)
		if k == key {
			return binary.NativeEndian.Uint64(auxv[8:])
		}
		if k == 0 { // AT_NULL ends the vector
			break
		}
	}
	return 0
}
