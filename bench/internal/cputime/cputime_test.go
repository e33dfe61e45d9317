package cputime

import (
	"encoding/binary"
	"os"
	"os/exec"
	"testing"
)

func TestParseStatTicks(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    int64
		wantErr bool
	}{
		{
			name: "plain",
			stat: "9672 (cat) R 9669 9669 2063 0 -1 4194304 99 0 0 0 7 5 0 0 20 0 1 0 32743\n",
			want: 12,
		},
		{
			name: "command with spaces and parentheses",
			stat: "42 (a) b (c)) S 1 42 42 0 -1 0 0 0 0 0 300 45 0 0 20 0 1 0 1",
			want: 345,
		},
		{name: "no command", stat: "42 S 1 2 3", wantErr: true},
		{name: "short", stat: "42 (x) S 1 2 3 4 5 6 7 8 9 10", wantErr: true},
		{name: "not a number", stat: "42 (x) S 1 42 42 0 -1 0 0 0 0 0 u 45 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatTicks(tt.stat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatTicks error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseStatTicks = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestAuxvValue(t *testing.T) {
	var auxv []byte
	for _, v := range []uint64{6, 4096, 17, 250, 0, 0, 17, 999} {
		auxv = binary.NativeEndian.AppendUint64(auxv, v)
	}
	if got := auxvValue(auxv, 17); got != 250 {
		t.Errorf("auxvValue(17) = %d, want 250", got)
	}
	if got := auxvValue(auxv, 33); got != 0 {
		t.Errorf("auxvValue(33) = %d, want 0 (the vector ends at AT_NULL)", got)
	}
	if got := auxvValue(auxv[:20], 17); got != 0 {
		t.Errorf("auxvValue on a truncated vector = %d, want 0", got)
	}
}

// TestProcess reads a live child's CPU time and fails once it is gone.
func TestProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got, err := Process(cmd.Process.Pid)
	if err != nil || got < 0 {
		t.Errorf("Process(running child) = %v, %v; want a non-negative time", got, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := Process(cmd.Process.Pid); err == nil {
		t.Errorf("Process(reaped child) succeeded, want an error")
	}
	if _, err := Process(os.Getpid()); err != nil {
		t.Errorf("Process(self): %v", err)
	}
}

func TestSelfAndChildren(t *testing.T) {
	c0 := Children()
	if err := exec.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	if Self() < 0 || Children() < c0 {
		t.Errorf("Self() = %v, Children() went from %v to %v; want non-negative and non-decreasing", Self(), c0, Children())
	}
}
