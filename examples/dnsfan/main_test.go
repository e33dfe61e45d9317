package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/uvevent/uvevent/examples/extest"
)

// fromHosts gives up to three names of /etc/hosts, each with its first IPv4
// address in the file.
func fromHosts(t *testing.T) map[string]string {
	want := map[string]string{}
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Logf("no names from /etc/hosts: %v", err)
		return want
	}
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan() && len(want) < 3; {
		f := strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0])
		if len(f) < 2 || strings.Contains(f[0], ":") || f[1] == "localhost" {
			continue
		}
		for _, name := range f[1:] {
			if _, seen := want[name]; !seen && len(want) < 3 {
				want[name] = f[0]
			}
		}
	}
	return want
}

// lookups gives twenty names or more to look up and, for each, an address
// its answer must hold, or "" for the names that must fail.
func lookups(t *testing.T) ([]string, map[string]string) {
	want := fromHosts(t)
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.1.2.3", "10.0.0.1", "192.0.2.1",
		"198.51.100.7", "203.0.113.9", "::1", "fe80::1", "2001:db8::1", "2001:db8::2:1"} {
		want[ip] = ip
	}
	want["localhost"] = "127.0.0.1"
	// names that fail without asking a DNS server (which may drop a query
	// and keep getaddrinfo waiting for its retry)
	for _, name := range []string{"a..b", "-bad-", "bad name", "..x", "a b",
		strings.Repeat("a", 64) + ".invalid", "", strings.Repeat("a", 300)} {
		want[name] = ""
	}
	for i := len(want); i < 20; i++ {
		ip := fmt.Sprint("127.0.9.", i)
		want[ip] = ip
	}
	var names []string
	for name := range want {
		names = append(names, name)
	}
	return names, want
}

// check runs the program with args and names, and checks that every name
// has one line, in order, with an answer holding want's address, or a failure
// where want has none or timeOK says a failure will do.
func check(t *testing.T, args []string, names []string, want map[string]string, timeOK bool) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append(append(args, "--"), names...), &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	var got, exp []string
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if i < len(names) {
			name, addr := names[i], want[names[i]]
			failed := strings.HasPrefix(line, name+": failed:")
			answer, isAnswer := strings.CutPrefix(line, name+":")
			if addr == "" && failed || timeOK && failed ||
				addr != "" && isAnswer && slices.Contains(strings.Fields(answer), addr) {
				line = name + ": as wanted"
			}
		}
		got = append(got, line)
	}
	for _, name := range names {
		exp = append(exp, name+": as wanted")
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("output (-want +got):\n%s\nwhat each line must hold: %q", diff, want)
	}
}

func TestDNSFanOut(t *testing.T) {
	names, want := lookups(t)
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			extest.NeedDriver(t, d)
			check(t, []string{"-driver", d, "-timeout", "1m", "-deadline", "1m"}, names, want, false)
		})
	}
}

// TestDNSFanOutTimeouts bounds each lookup, then all of them, to nothing: each
// name still gets its line, its answer or a failure.
func TestDNSFanOutTimeouts(t *testing.T) {
	names, want := lookups(t)
	for _, d := range extest.Drivers {
		t.Run(d, func(t *testing.T) {
			extest.NeedDriver(t, d)
			check(t, []string{"-driver", d, "-timeout", "0", "-deadline", "1m"}, names, want, true)
			check(t, []string{"-driver", d, "-timeout", "1m", "-deadline", "0"}, names, want, true)
		})
	}
}

func TestDNSFanOutDefaultNames(t *testing.T) {
	if len(defaultNames) != 20 {
		t.Errorf("%d default names, want 20", len(defaultNames))
	}
}
