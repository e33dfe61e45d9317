// Tests for the parsing of command lines, the {c:NAME} and {go:NAME} words,
// the comparator list, and the order of the rounds.
package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		arg     string
		want    command
		wantErr bool
	}{
		{
			arg:  "t1-uvevent={go:t1} -n 1000000",
			want: command{name: "t1-uvevent", argv: []string{"{go:t1}", "-n", "1000000"}},
		},
		{
			arg: "d1-go-cgo=GODEBUG=netdns=cgo  GOGC=off {go:d1resolver} -resolver cgo",
			want: command{name: "d1-go-cgo", env: []string{"GODEBUG=netdns=cgo", "GOGC=off"},
				argv: []string{"{go:d1resolver}", "-resolver", "cgo"}},
		},
		{
			// Only leading VAR=value words are environment.
			arg:  "x=bin/x A=1",
			want: command{name: "x", argv: []string{"bin/x", "A=1"}},
		},
		{
			// Not a variable name: the program.
			arg:  "x=1A=b c",
			want: command{name: "x", argv: []string{"1A=b", "c"}},
		},
		{
			arg:  "x=./a-b=c",
			want: command{name: "x", argv: []string{"./a-b=c"}},
		},
		{arg: "no-equals", wantErr: true},
		{arg: "=bin/x", wantErr: true},
		{arg: "x=", wantErr: true},
		{arg: "x=  ", wantErr: true},
		{arg: "x=A=1 B=2", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseCommand(tt.arg)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseCommand(%q) error = %v, wantErr %v", tt.arg, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(command{})); !tt.wantErr && diff != "" {
			t.Errorf("parseCommand(%q) mismatch (-want +got):\n%s", tt.arg, diff)
		}
	}
}

func TestParseProgram(t *testing.T) {
	tests := []struct {
		word   string
		want   program
		wantOK bool
	}{
		{word: "{c:e1_echo}", want: program{"c", "e1_echo"}, wantOK: true},
		{word: "{go:e1load}", want: program{"go", "e1load"}, wantOK: true},
		{word: "{rust:x}"},
		{word: "{c:}"},
		{word: "{c:a/b}"},
		{word: "{go:../x}"},
		{word: "{c:x"},
		{word: "c:x}"},
		{word: "x{c:x}"},
		{word: "{c:x}y"},
		{word: "{cx}"},
	}
	for _, tt := range tests {
		got, ok := parseProgram(tt.word)
		if ok != tt.wantOK || got != tt.want {
			t.Errorf("parseProgram(%q) = %+v, %v; want %+v, %v", tt.word, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestExpand(t *testing.T) {
	c := command{
		name: "e1-raw-c",
		env:  []string{"A=1"},
		argv: []string{"{go:e1load}", "-impl", "raw-c", "{c:e1_echo}", "{go:e1load}"},
	}
	var asked []program
	build := func(p program) (string, error) {
		asked = append(asked, p)
		return "/tmp/" + p.kind + "-" + p.name, nil
	}
	got, err := expand(c, build)
	if err != nil {
		t.Fatal(err)
	}
	want := command{
		name: "e1-raw-c",
		env:  []string{"A=1"},
		argv: []string{"/tmp/go-e1load", "-impl", "raw-c", "/tmp/c-e1_echo", "/tmp/go-e1load"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(command{})); diff != "" {
		t.Errorf("expand mismatch (-want +got):\n%s", diff)
	}
	if c.argv[0] != "{go:e1load}" {
		t.Errorf("expand changed its argument's argv: %q", c.argv)
	}
	wantAsked := []program{{"go", "e1load"}, {"c", "e1_echo"}, {"go", "e1load"}}
	if diff := cmp.Diff(wantAsked, asked, cmp.AllowUnexported(program{})); diff != "" {
		t.Errorf("expand built (-want +got):\n%s", diff)
	}

	boom := errors.New("boom")
	_, err = expand(c, func(program) (string, error) { return "", boom })
	if !errors.Is(err, boom) {
		t.Errorf("expand with a failing build = %v, want boom", err)
	}
}

// TestComparators checks that every comparator parses, has a name of its
// own and names programs whose sources exist, and that rounds names only
// workloads the comparators run.
func TestComparators(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	names := make(map[string]bool)
	workloads := make(map[string]bool) // those in rounds not yet seen
	for w := range rounds {
		workloads[w] = true
	}
	for _, arg := range comparators {
		c, err := parseCommand(arg)
		if err != nil {
			t.Error(err)
			continue
		}
		if names[c.name] {
			t.Errorf("comparator name %q used twice", c.name)
		}
		names[c.name] = true
		delete(workloads, workloadOf(c.name))
		_, err = expand(c, func(p program) (string, error) {
			_, err := os.Stat(filepath.Join(root, p.source()))
			return "", err
		})
		if err != nil {
			t.Errorf("comparator %q: %v", arg, err)
		}
	}
	for w := range workloads {
		t.Errorf("rounds names workload %q, which no comparator runs", w)
	}
}

// TestBuilderRemembersFailure checks that a program whose source is missing
// fails without running a compiler, and fails the same way when asked again.
func TestBuilderRemembersFailure(t *testing.T) {
	b := newBuilder("no-such-compiler", t.TempDir())
	p := program{"c", "no_such_program"}
	_, err1 := b.build(p)
	_, err2 := b.build(p)
	if !errors.Is(err1, os.ErrNotExist) || err2 != err1 {
		t.Errorf("build of a missing source = %v, then %v; want the same not-exist error twice", err1, err2)
	}
}

func TestRunOrder(t *testing.T) {
	args := []string{
		"t1-raw-c={c:t1_timers}",
		"e1-raw-c={go:e1load} -impl raw-c {c:e1_echo}",
		"t1-afterfunc={go:t1afterfunc}",
		"m1=bin/m1",
		"e1-net={go:e1load} -impl go-net {go:e1net}",
		"t1-uvevent={go:t1}",
		"z9-uvevent=bin/z9",
		"e1-uvevent={go:e1load} -impl uvevent {go:e1uv}",
		"m1-uvevent={go:m1}",
	}
	want := []string{
		"t1-raw-c={c:t1_timers}",
		"t1-afterfunc={go:t1afterfunc}",
		"t1-uvevent={go:t1}",
		"e1-raw-c={go:e1load} -impl raw-c {c:e1_echo}",
		"e1-net={go:e1load} -impl go-net {go:e1net}",
		"e1-uvevent={go:e1load} -impl uvevent {go:e1uv}",
		"m1=bin/m1",
		"m1-uvevent={go:m1}",
		"z9-uvevent=bin/z9",
	}
	if diff := cmp.Diff(want, runOrder(args)); diff != "" {
		t.Errorf("runOrder mismatch (-want +got):\n%s", diff)
	}
	if args[2] != "t1-afterfunc={go:t1afterfunc}" {
		t.Errorf("runOrder reordered its argument")
	}
}

// TestRoundOrders: one round keeps the given order; several are each a
// permutation, the same for the same seed, and not all the same order.
func TestRoundOrders(t *testing.T) {
	if diff := cmp.Diff([][]int{{0, 1, 2}}, roundOrders(3, 1, 42)); diff != "" {
		t.Errorf("one round (-want +got):\n%s", diff)
	}
	a, b := roundOrders(8, 5, 42), roundOrders(8, 5, 42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, other orders (-first +second):\n%s", diff)
	}
	if len(a) != 5 {
		t.Fatalf("%d rounds, want 5", len(a))
	}
	differ := false
	for _, order := range a {
		sorted := slices.Sorted(slices.Values(order))
		if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7}, sorted); diff != "" {
			t.Errorf("order %v is not a permutation of 0..7", order)
		}
		differ = differ || !slices.Equal(order, a[0])
	}
	if !differ {
		t.Errorf("five rounds of 8 programs, all in the order %v", a[0])
	}
	if diff := cmp.Diff(a, roundOrders(8, 5, 43)); diff == "" {
		t.Errorf("seeds 42 and 43 gave the same orders %v", a)
	}
}

func TestWorkloadGroups(t *testing.T) {
	cmds := []command{{name: "t1-raw-c"}, {name: "t1-uvevent"}, {name: "e1-raw-c"}, {name: "e1-uvevent"}, {name: "m1"}}
	var got [][]string
	for _, g := range workloadGroups(cmds) {
		var names []string
		for _, c := range g {
			names = append(names, c.name)
		}
		got = append(got, names)
	}
	want := [][]string{{"t1-raw-c", "t1-uvevent"}, {"e1-raw-c", "e1-uvevent"}, {"m1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workloadGroups mismatch (-want +got):\n%s", diff)
	}
}

func TestParseLoadAverage(t *testing.T) {
	for text, want := range map[string]string{
		"2.67 1.53 0.85 3/412 21138\n": "2.67",
		"":                             "?",
	} {
		if got := parseLoadAverage(text); got != want {
			t.Errorf("parseLoadAverage(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestKeepOnly(t *testing.T) {
	args := []string{"t1-raw-c=a", "e1-raw-c=b", "e1@scale-gnet-1=c", "e1-uvevent=d"}
	if diff := cmp.Diff([]string{"e1-raw-c=b", "e1-uvevent=d"}, keepOnly(args, "e1")); diff != "" {
		t.Errorf("keepOnly e1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"t1-raw-c=a", "e1@scale-gnet-1=c"}, keepOnly(args, "e1@scale,t1")); diff != "" {
		t.Errorf("keepOnly e1@scale,t1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(args, keepOnly(args, "")); diff != "" {
		t.Errorf("keepOnly of nothing (-want +got):\n%s", diff)
	}
}
