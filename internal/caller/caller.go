// Package caller names the line of user code behind a coroutine: where it
// was spawned, where it waits. Frames of the runtime and of uvevent's
// packages that act for a caller (event, eventkind, eventref, async,
// reactor, uv) are skipped; their tests count as callers.
package caller

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
)

// Site returns "dir/file.go:line" of the first caller of Site's caller
// outside uvevent's packages, or "" when there is none.
func Site() string {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if f.Function != "" && !skipped(f.Function) {
			return short(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// Goroutine returns the calling goroutine's number, as stack dumps show
// it. It costs a short stack dump: call it once per goroutine.
func Goroutine() int64 {
	var buf [64]byte
	n, _ := parseHeader(buf[:runtime.Stack(buf[:], false)])
	return n
}

// Waiting dumps every goroutine's stack and returns, by goroutine number,
// the first user line of each: where a parked goroutine waits. It stops
// the world for the dump; call it for reports, not on a hot path.
func Waiting() map[int64]string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	sites := map[int64]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		id, ok := parseHeader(g)
		if !ok {
			continue
		}
		if site := firstUserFrame(g); site != "" {
			sites[id] = site
		}
	}
	return sites
}

// parseHeader reads "goroutine 42 [" at the start of a dump.
func parseHeader(b []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0, false
	}
	i := bytes.IndexByte(rest, ' ')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	return n, err == nil
}

// firstUserFrame walks a goroutine's dump: after the header, each frame is
// a function line and a "\tfile:line +0x.." line.
func firstUserFrame(g []byte) string {
	lines := strings.Split(string(g), "\n")
	for i := 1; i+1 < len(lines); i += 2 {
		fn, loc := lines[i], strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(fn, "created by ") {
			return ""
		}
		if skipped(fn) {
			continue
		}
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		return short(loc)
	}
	return ""
}

// skipped reports whether a frame's function belongs to the runtime, to
// package sync (a goroutine met on its way into a wait may still hold or
// want a mutex: its line is the caller's, not sync/mutex.go's) or to the
// packages that wait on a caller's behalf.
func skipped(fn string) bool {
	if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/") || strings.HasPrefix(fn, "sync.") {
		return true
	}
	for _, p := range []string{"/uvevent/event.", "/uvevent/eventkind.", "/uvevent/eventref.", "/uvevent/async.", "/uvevent/reactor.", "/uvevent/uv."} {
		if strings.Contains(fn, p) {
			return true
		}
	}
	return false
}

// short keeps the last directory and the file name.
func short(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
			return path[j+1:]
		}
	}
	return path
}
