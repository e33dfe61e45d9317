package uv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/event"
	"github.com/uvevent/uvevent/uv"
)

// With StdioLoop, as with StdioWriter and os/exec, a child's exit is
// reported after its output: the callbacks hear every line, then the
// stream's end, then the exit, in that order, run after run. Both drivers.
func TestProcessStdioLoopExitAfterOutput(t *testing.T) {
	uv.UvtEachDriver(t, func(t *testing.T, u *uv.UvtReactor) {
		want := []string{"line a", "line b", "line c", "end EOF", "exit 0"}
		for run := range 50 {
			var seen []string
			p := startSh(t, u, uv.ProcessOptions{Stdout: uv.StdioLoop}, "echo a; echo b; printf c")
			out := p.StdoutIO()
			uv.UvtMust(t, u.Call(func() {
				uv.UvtMust(t, uv.ReadLines(out, func(line []byte, err error) {
					if err != nil {
						seen = append(seen, fmt.Sprintf("end %v", err))
						out.Close()
						return
					}
					seen = append(seen, "line "+string(line))
				}))
				event.On(p, func(code int, err error) { seen = append(seen, fmt.Sprintf("exit %d", code)) })
			}))
			uv.UvtMust(t, u.Run(context.Background()))
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Fatalf("run %d: callbacks (-want +got):\n%s", run, diff)
			}
		}
		uv.UvtShutdown(t, u, false)
	})
}
