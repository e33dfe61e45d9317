package counts

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) {
	if os.Getenv("COUNTS_TEST_CHILD") == "writer" {
		// A process whose system calls are counted: for each byte read
		// on stdin, a write to /dev/null and the byte back on stdout.
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			os.Exit(1)
		}
		b := make([]byte, 1)
		for {
			if _, err := os.Stdin.Read(b); err != nil {
				os.Exit(0)
			}
			f.Write(b)
			os.Stdout.Write(b)
		}
	}
	os.Exit(m.Run())
}

func TestParseStatusSwitches(t *testing.T) {
	status := strings.Join([]string{
		"Name:\te1uv",
		"State:\tS (sleeping)",
		"Threads:\t5",
		"voluntary_ctxt_switches:\t1200",
		"nonvoluntary_ctxt_switches:\t34",
		"",
	}, "\n")
	if n, err := ParseStatusSwitches(status); err != nil || n != 1234 {
		t.Errorf("ParseStatusSwitches = %d, %v; want 1234", n, err)
	}
	for name, bad := range map[string]string{
		"no lines":      "Name:\tx\n",
		"one line":      "voluntary_ctxt_switches:\t3\n",
		"not a number":  "voluntary_ctxt_switches:\tmany\nnonvoluntary_ctxt_switches:\t1\n",
		"empty content": "",
	} {
		if n, err := ParseStatusSwitches(bad); err == nil {
			t.Errorf("%s: ParseStatusSwitches = %d, want an error", name, n)
		}
	}
}

// TestSwitchesOfThisProcess reads the live /proc of the test process: the
// sum over its threads is at least its main thread's count.
func TestSwitchesOfThisProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	main, err := ParseStatusSwitches(string(b))
	if err != nil {
		t.Fatal(err)
	}
	all, err := Switches(os.Getpid())
	if err != nil || all < main {
		t.Errorf("Switches = %d, %v; want at least the main thread's %d", all, err, main)
	}
	if _, err := Switches(-1); err == nil {
		t.Error("Switches of no process succeeded")
	}
}

func TestParsePerfStat(t *testing.T) {
	out := strings.Join([]string{
		"# started on Sat Dec  5 07:46:49 2026",
		"",
		"168461,,raw_syscalls:sys_enter,262300501,100.00,,",
		"84000,,syscalls:sys_enter_write,262300501,100.00,,",
		"<not counted>,,syscalls:sys_enter_futex,0,100.00,,",
		"116,,context-switches,262300501,100.00,,Events disabled",
		"Events enabled",
		"Events disabled",
	}, "\n")
	got, err := ParsePerfStat(out)
	want := map[string]int64{
		"raw_syscalls:sys_enter":   168461,
		"syscalls:sys_enter_write": 84000,
		"syscalls:sys_enter_futex": 0,
		"context-switches":         116,
	}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("ParsePerfStat: %v, mismatch (-want +got):\n%s", err, diff)
	}
	for name, bad := range map[string]string{
		"nothing":       "# started on Sat Dec  5\n\n",
		"not supported": "<not supported>,,syscalls:sys_enter_poll,0,100.00,,\n",
		"not a count":   "12x,,raw_syscalls:sys_enter,1,100.00,,\n",
	} {
		if _, err := ParsePerfStat(bad); err == nil {
			t.Errorf("%s: ParsePerfStat succeeded", name)
		}
	}
}

func TestPerfCalls(t *testing.T) {
	counts := map[string]int64{perfTotal: 1000}
	for _, ev := range perfEvents[1:] {
		counts[ev] = 1
	}
	counts["syscalls:sys_enter_read"] = 300
	counts["syscalls:sys_enter_ppoll"] = 7
	got, err := perfCalls(counts)
	want := Calls{Total: 1000, Group: map[string]int64{
		"read": 301, "write": 2, "epoll_pwait": 1, "epoll_wait": 1,
		"futex": 1, "nanosleep": 1, "poll": 8,
	}}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("perfCalls: %v, mismatch (-want +got):\n%s", err, diff)
	}
	delete(counts, "syscalls:sys_enter_futex")
	if _, err := perfCalls(counts); err == nil {
		t.Error("perfCalls without the futex count succeeded")
	}
}

// straceOut is strace 6.1's -c summary (columns as it prints them).
const straceOut = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ------------------
 83.86    0.498465          85      5842       824 futex
 13.26    0.078836        1051        75           nanosleep
  2.81    0.016676          46       358           epoll_pwait
  0.05    0.000300           3       100           read
  0.02    0.000100           1        90           writev
  0.00    0.000000           0         4           ppoll
------ ----------- ----------- --------- --------- ------------------
100.00    0.594377          92      6469       824 total
`

func TestParseStrace(t *testing.T) {
	got, err := ParseStrace(straceOut)
	want := map[string]int64{"futex": 5842, "nanosleep": 75, "epoll_pwait": 358, "read": 100, "writev": 90, "ppoll": 4}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("ParseStrace: %v, mismatch (-want +got):\n%s", err, diff)
	}
	wantCalls := Calls{Total: 6469, Group: map[string]int64{
		"read": 100, "write": 90, "epoll_pwait": 358, "epoll_wait": 0,
		"futex": 5842, "nanosleep": 75, "poll": 4,
	}}
	if diff := cmp.Diff(wantCalls, straceCalls(got)); diff != "" {
		t.Errorf("straceCalls mismatch (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]string{
		"nothing":   "",
		"no end":    strings.SplitAfter(straceOut, "ppoll\n")[0],
		"short row": "% time\n------\n 1.0 0.1 futex\n------\n",
		"bad count": "% time\n------\n 1.0 0.1 3 many 1 futex\n------\n",
	} {
		if _, err := ParseStrace(bad); err == nil {
			t.Errorf("%s: ParseStrace succeeded", name)
		}
	}
}

// TestTracerWithoutTool: a Tracer with no tool refuses to prepare a
// count, with its reason.
func TestTracerWithoutTool(t *testing.T) {
	tr := Tracer{Why: "perf absent: apt-get install linux-perf for syscall counts; strace absent too"}
	if _, err := tr.Prepare(os.Getpid()); err == nil || !strings.Contains(err.Error(), "linux-perf") {
		t.Errorf("Prepare without a tool = %v, want the reason", err)
	}
	if got := tr.Source(); !strings.HasPrefix(got, "no syscall counts: perf absent") {
		t.Errorf("Source = %q", got)
	}
}

// TestTraceCountsAChild counts the system calls of a child that makes two
// writes per request, 10 requests in the window, with each tool this
// machine has.
func TestTraceCountsAChild(t *testing.T) {
	found := Find()
	tools := []Tracer{found}
	if _, err := exec.LookPath("strace"); err == nil && found.Tool != "strace" {
		tools = append(tools, Tracer{Tool: "strace", Why: "asked for"})
	}
	for _, tr := range tools {
		t.Run(tr.Tool, func(t *testing.T) {
			if tr.Tool == "" {
				t.Skipf("nothing to count with: %s", tr.Why)
			}
			child := exec.Command(os.Args[0], "-test.run", "^$")
			child.Env = append(os.Environ(), "COUNTS_TEST_CHILD=writer")
			stdin, err := child.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				stdin.Close()
				child.Wait()
			}()
			request := func() {
				b := []byte{1}
				if _, err := stdin.Write(b); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(stdout, b); err != nil {
					t.Fatal(err)
				}
			}
			request() // the child has started
			trace, err := tr.Prepare(child.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if err := trace.Begin(); err != nil {
				trace.Abandon()
				t.Fatal(err)
			}
			for range 10 {
				request()
			}
			calls, err := trace.Stop()
			if err != nil {
				t.Fatal(err)
			}
			// 20 writes and 10 reads (the last one waiting at the end) in
			// the window; a call under way at either end may be missed:
			// strace counts a call as it returns, and perf switches the
			// total's counter and each group's on and off one after the
			// other, so the total may miss a few of the groups' calls (7 of
			// 1,083 seen under load), never a tenth.
			r, w := calls.Group["read"], calls.Group["write"]
			if w < 19 || r < 9 || calls.Total < (r+w)*9/10 {
				t.Errorf("counted %+v: want at least 19 writes and 9 reads, and a total of at least nine tenths of those", calls)
			}
		})
	}
}

// TestFindWithoutTools: with neither perf nor strace on PATH, Find gives no
// tool and says what to install.
func TestFindWithoutTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	tr := Find()
	if tr.Tool != "" || tr.Why != "perf absent: apt-get install linux-perf for syscall counts; strace absent too" {
		t.Errorf("Find with an empty PATH = %+v", tr)
	}
}

// TestFindPerfRefused: a perf that may not count the tracepoints gives way
// to strace, the reason kept for the note.
func TestFindPerfRefused(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"perf":   "#!/bin/sh\necho 'Error:' >&2\necho 'No permission to enable syscalls:sys_enter_read' >&2\nexit 1\n",
		"strace": "#!/bin/sh\nexit 0\n",
	} {
		if err := os.WriteFile(dir+"/"+name, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	tr := Find()
	want := "perf cannot count syscall tracepoints here (No permission to enable syscalls:sys_enter_read)"
	if tr.Tool != "strace" || tr.Why != want {
		t.Errorf("Find = %+v, want strace and %q", tr, want)
	}
	if got := tr.Source(); !strings.Contains(got, "strace -c -f") || !strings.Contains(got, want) {
		t.Errorf("Source = %q", got)
	}
}
