// Package caller names the line of user code that called into uvevent:
// where a coroutine was spawned, where it waits. Frames of uvevent's own
// packages that act for a caller (event, async, reactor) are skipped; their
// tests count as callers.
package caller

import (
	"runtime"
	"strconv"
	"strings"
)

// Stack records the callers of the function calling it, to be named later
// by Site. Recording is cheap; naming is not.
type Stack [8]uintptr

// Record fills s with the stack above the caller of Record's caller.
func (s *Stack) Record() { runtime.Callers(3, s[:]) }

// Site returns "dir/file.go:line" of the first recorded frame outside
// uvevent's packages, or "" when there is none.
func (s *Stack) Site() string {
	frames := runtime.CallersFrames(s[:])
	for {
		f, more := frames.Next()
		if f.Function != "" && !inside(f.Function) {
			return short(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// Site is Record and Site in one step, for the caller of its caller.
func Site() string {
	var s Stack
	runtime.Callers(3, s[:])
	return s.Site()
}

func inside(fn string) bool {
	for _, p := range []string{"/uvevent/event.", "/uvevent/async.", "/uvevent/reactor."} {
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
