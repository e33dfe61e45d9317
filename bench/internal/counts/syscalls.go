package counts

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Group is a set of system calls counted together under one key.
type Group struct {
	Key   string
	Calls []string
}

// Groups are the system calls counted apart from the total: the echo's own
// reads and writes, the waits of an event loop (Go's netpoller and libuv
// wait in epoll_pwait, gnet and nbio in epoll_wait), the hand-offs between
// threads (futex), the Go runtime's naps (nanosleep: sysmon's and a
// spinning thread's usleep) and poll(2).
var Groups = []Group{
	{"read", []string{"read", "readv"}},
	{"write", []string{"write", "writev"}},
	{"epoll_pwait", []string{"epoll_pwait"}},
	{"epoll_wait", []string{"epoll_wait"}},
	{"futex", []string{"futex"}},
	{"nanosleep", []string{"nanosleep"}},
	{"poll", []string{"poll", "ppoll"}},
}

// Calls are the system calls a process made over a window: all of them,
// and those of each of Groups by its key.
type Calls struct {
	Total int64
	Group map[string]int64
}

// callsOf sums byName, the calls by system call name, into Groups.
func callsOf(total int64, byName map[string]int64) Calls {
	c := Calls{Total: total, Group: make(map[string]int64, len(Groups))}
	for _, g := range Groups {
		for _, name := range g.Calls {
			c.Group[g.Key] += byName[name]
		}
	}
	return c
}

// perfTotal is the tracepoint every system call enters by; perfEvents are
// the tracepoints perf counts, the total's and one per call of Groups.
const perfTotal = "raw_syscalls:sys_enter"

var perfEvents = func() []string {
	ev := []string{perfTotal}
	for _, g := range Groups {
		for _, name := range g.Calls {
			ev = append(ev, "syscalls:sys_enter_"+name)
		}
	}
	return ev
}()

// ParsePerfStat returns the counts, by event name, of the output of `perf
// stat -x,` (CSV: value, unit, event, ...). A count perf could not take
// because the process never ran ("<not counted>") is 0; an event perf does
// not support is an error, as is output without any count. Comment lines
// and the "Events enabled/disabled" notes of --control are skipped.
func ParsePerfStat(out string) (map[string]int64, error) {
	counts := make(map[string]int64)
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || f[2] == "" {
			continue
		}
		var n int64
		switch f[0] {
		case "<not counted>":
		case "<not supported>":
			return nil, fmt.Errorf("perf does not support the event %s", f[2])
		default:
			var err error
			if n, err = strconv.ParseInt(f[0], 10, 64); err != nil {
				return nil, fmt.Errorf("perf stat line %q: %w", line, err)
			}
		}
		counts[f[2]] = n
	}
	if len(counts) == 0 {
		return nil, errors.New("no count in perf stat's output")
	}
	return counts, nil
}

// perfCalls sums a perf stat's counts of perfEvents into Calls.
func perfCalls(counts map[string]int64) (Calls, error) {
	byName := make(map[string]int64)
	for _, ev := range perfEvents {
		n, ok := counts[ev]
		if !ok {
			return Calls{}, fmt.Errorf("no count of %s in perf stat's output", ev)
		}
		if name, ok := strings.CutPrefix(ev, "syscalls:sys_enter_"); ok {
			byName[name] = n
		}
	}
	return callsOf(counts[perfTotal], byName), nil
}

// ParseStrace returns the calls, by system call name, of the summary that
// `strace -c` prints: the rows between its two dashed lines, whose fourth
// column is the count and last the name (the "errors" column may be
// blank). The total line is not read: it is the rows' sum.
func ParseStrace(out string) (map[string]int64, error) {
	counts := make(map[string]int64)
	dashes := 0
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "------") {
			dashes++
			continue
		}
		if dashes != 1 {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("strace summary row %q: too few columns", line)
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("strace summary row %q: %w", line, err)
		}
		counts[f[len(f)-1]] += n
	}
	if dashes < 2 {
		return nil, errors.New("no summary table in strace's output")
	}
	return counts, nil
}

// straceCalls sums a strace summary's calls into Calls.
func straceCalls(byName map[string]int64) Calls {
	var total int64
	for _, n := range byName {
		total += n
	}
	return callsOf(total, byName)
}

// Tracer counts a process's system calls with Tool: "perf" (its syscall
// tracepoints: root may read them), "strace" (-c -f: every call stops the
// thread, so the server runs far slower and its threads wait and nap more
// often than untraced), or "" when neither can, Why saying why.
type Tracer struct {
	Tool string
	Why  string // why perf was not taken, or why there are no counts
}

// probeTimeout bounds the probing run of perf.
const probeTimeout = 10 * time.Second

// Find returns the Tracer this machine allows: perf when it is installed
// and may count the tracepoints (tried on /bin/true), else strace when it
// is installed, else none.
func Find() Tracer {
	var why string
	if _, err := exec.LookPath("perf"); err != nil {
		why = "perf absent: apt-get install linux-perf for syscall counts"
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "perf", "stat", "-x,",
			"-e", strings.Join(perfEvents, ","), "--", "true").CombinedOutput()
		if err == nil {
			_, err = ParsePerfStat(string(out))
		}
		if err == nil {
			return Tracer{Tool: "perf"}
		}
		why = fmt.Sprintf("perf cannot count syscall tracepoints here (%s)", lastLine(out, err))
	}
	if _, err := exec.LookPath("strace"); err == nil {
		return Tracer{Tool: "strace", Why: why}
	}
	return Tracer{Why: why + "; strace absent too"}
}

// lastLine is the last non-empty line of out, or err's text.
func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// Source says in a sentence how t counts, for the note under a table.
func (t Tracer) Source() string {
	switch t.Tool {
	case "perf":
		return "syscalls counted by perf stat's syscall tracepoints"
	case "strace":
		return "syscalls counted by strace -c -f (" + t.Why + "); the server runs traced, which inflates the waits and naps (epoll, futex, nanosleep): only read and write compare with perf's counts"
	}
	return "no syscall counts: " + t.Why
}

// Trace is a count of a process's system calls under way.
type Trace struct {
	tool   string
	pid    int
	reaped bool // the tool has exited and been reaped
	cmd    *exec.Cmd
	out    *os.File // where the tool writes its counts
	ctl    *os.File // perf: its --control commands
	ack    *os.File // perf: its acknowledgements
	done   chan error
}

// ackTimeout bounds the wait for a tool to start or stop counting.
const ackTimeout = 5 * time.Second

// Prepare readies a count of the system calls of every thread of process
// pid, to begin with Begin: perf starts now with its counters off (so its
// start-up, a few hundred milliseconds, need not fall in the window), strace
// at Begin (once attached it slows every call).
func (t Tracer) Prepare(pid int) (*Trace, error) {
	if t.Tool == "" {
		return nil, errors.New(t.Source())
	}
	out, err := os.CreateTemp("", "counts-*.txt")
	if err != nil {
		return nil, err
	}
	tr := &Trace{tool: t.Tool, pid: pid, out: out, done: make(chan error, 1)}
	if t.Tool == "perf" {
		if err := tr.startPerf(); err != nil {
			tr.cleanup()
			return nil, err
		}
	}
	return tr, nil
}

// Begin starts the count and returns once the tool counts: perf has
// acknowledged its enable, strace has attached to every thread. Stop ends
// it; after a failed Begin, Abandon.
func (tr *Trace) Begin() error {
	if tr.tool == "perf" {
		return tr.command("enable")
	}
	return tr.startStrace()
}

// Abandon ends a prepared count that will not be read.
func (tr *Trace) Abandon() {
	if tr.cmd != nil && tr.cmd.Process != nil && !tr.reaped {
		tr.kill()
	}
	tr.cleanup()
}

// startPerf starts perf with its counters off (-D -1), to be turned on
// and off through --control: the window is the one asked for, not perf's
// start-up.
func (tr *Trace) startPerf() error {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return err
	}
	tr.ctl, tr.ack = ctlW, ackR
	tr.cmd = exec.Command("perf", "stat", "-x,", "-o", tr.out.Name(), "-D", "-1",
		"--control", "fd:3,4", "-e", strings.Join(perfEvents, ","), "-p", strconv.Itoa(tr.pid))
	tr.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	err = tr.run(nil)
	ctlR.Close()
	ackW.Close()
	return err
}

// startStrace attaches strace and waits until it has attached.
func (tr *Trace) startStrace() error {
	tr.cmd = exec.Command("strace", "-c", "-f", "-o", tr.out.Name(), "-p", strconv.Itoa(tr.pid))
	stderr, err := tr.cmd.StderrPipe()
	if err != nil {
		return err
	}
	attached := make(chan struct{})
	if err := tr.run(func() { waitAttached(stderr, attached) }); err != nil {
		return err
	}
	select {
	case <-attached:
		return nil
	case err := <-tr.done:
		tr.reaped = true
		return fmt.Errorf("strace: %v", err)
	case <-time.After(ackTimeout):
		tr.kill()
		return fmt.Errorf("strace did not attach in %v", ackTimeout)
	}
}

// run starts the tool and a goroutine that reaps it, after reading (if not
// nil) what the tool says on its stderr.
func (tr *Trace) run(read func()) error {
	if err := tr.cmd.Start(); err != nil {
		return err
	}
	go func() {
		if read != nil {
			read()
		}
		tr.done <- tr.cmd.Wait()
	}()
	return nil
}

// waitAttached reads strace's stderr, closes attached at its line
// "Process PID attached [with N threads]" (printed once every thread is),
// and reads on to the end.
func waitAttached(stderr io.Reader, attached chan struct{}) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if attached != nil && strings.Contains(sc.Text(), " attached") {
			close(attached)
			attached = nil
		}
	}
	io.Copy(io.Discard, stderr)
}

// command sends perf a --control command and waits for its
// acknowledgement.
func (tr *Trace) command(cmd string) error {
	if _, err := io.WriteString(tr.ctl, cmd+"\n"); err != nil {
		return fmt.Errorf("perf %s: %w", cmd, err)
	}
	tr.ack.SetReadDeadline(time.Now().Add(ackTimeout))
	buf := make([]byte, 16)
	n, err := tr.ack.Read(buf)
	if err != nil {
		tr.kill()
		return fmt.Errorf("perf %s: no acknowledgement: %w", cmd, err)
	}
	if !bytes.HasPrefix(buf[:n], []byte("ack")) {
		return fmt.Errorf("perf %s: acknowledged %q", cmd, buf[:n])
	}
	return nil
}

// Stop ends the count begun by Begin and returns it.
func (tr *Trace) Stop() (Calls, error) {
	defer tr.cleanup()
	if tr.tool == "perf" {
		if err := tr.command("disable"); err != nil {
			return Calls{}, err
		}
	}
	tr.cmd.Process.Signal(syscall.SIGINT) // both print their counts on SIGINT
	select {
	case <-tr.done: // an exit status from SIGINT is no failure
		tr.reaped = true
	case <-time.After(ackTimeout):
		tr.kill()
		return Calls{}, fmt.Errorf("%s did not stop in %v", tr.tool, ackTimeout)
	}
	b, err := os.ReadFile(tr.out.Name())
	if err != nil {
		return Calls{}, err
	}
	if tr.tool == "perf" {
		counts, err := ParsePerfStat(string(b))
		if err != nil {
			return Calls{}, err
		}
		return perfCalls(counts)
	}
	byName, err := ParseStrace(string(b))
	if err != nil {
		return Calls{}, err
	}
	return straceCalls(byName), nil
}

// kill ends the tool at once and reaps it.
func (tr *Trace) kill() {
	tr.cmd.Process.Kill()
	<-tr.done
	tr.reaped = true
}

// cleanup closes and removes what the count used.
func (tr *Trace) cleanup() {
	for _, f := range []*os.File{tr.ctl, tr.ack} {
		if f != nil {
			f.Close()
		}
	}
	tr.out.Close()
	os.Remove(tr.out.Name())
}
