// Tests for the parsing of command lines, the {c:NAME} and {go:NAME} words,
// and the comparator list.
package main

import (
	"errors"
	"os"
	"path/filepath"
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
// own and names programs whose sources exist, and that repeats names only
// workloads the comparators run.
func TestComparators(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	names := make(map[string]bool)
	workloads := make(map[string]bool) // those in repeats not yet seen
	for w := range repeats {
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
		t.Errorf("repeats names workload %q, which no comparator runs", w)
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
