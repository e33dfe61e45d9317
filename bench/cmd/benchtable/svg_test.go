// Tests for the plots: which files a run's results make, and that each is
// well-formed SVG naming every implementation it draws.
package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, lines ...string) []Result {
	t.Helper()
	var rs []Result
	for _, l := range lines {
		r, err := parseResultLine(l)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// wellFormed reports the first XML error in doc, if any.
func wellFormed(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestPlots(t *testing.T) {
	rs := mustParse(t,
		"E1 raw-c msgs_per_s=100000 server_cpu_us_per_msg=6.3",
		"E1 gnet msgs_per_s=90000 server_cpu_us_per_msg=7.1",
		"E1 uvevent msgs_per_s=95000 server_cpu_us_per_msg=6.9",
		"E1@scale gnet-1 msgs_per_s=80000 server_cpu_us_per_msg=6",
		"E1@scale uvevent-2r msgs_per_s=99000 server_cpu_us_per_msg=7",
		"T1@1e4 raw-c wall_ns=101000000 peak_rss_kib=5000 fired=10000",
		"T1@1e5 raw-c wall_ns=130000000 peak_rss_kib=20000 fired=100000",
		"T1 raw-c wall_ns=2400000000 peak_rss_kib=150000 fired=1000000",
		"T1 uvevent wall_ns=500000000 peak_rss_kib=130000 fired=1000000",
		"L1 raw-c early=5000 min_us=-990 p10_us=-800 p25_us=-500 p50_us=-1 p75_us=500 p90_us=800 p99_us=1100 max_us=1400",
		"L1 uvevent early=0 min_us=3 p10_us=200 p25_us=500 p50_us=950 p75_us=1400 p90_us=1700 p99_us=1900 max_us=2100",
		"X1 raw-c rtt_ns=64000 rounds=20000",
	)
	files := plots(rs)
	var names []string
	for _, f := range files {
		names = append(names, f.name)
		if err := wellFormed(f.svg); err != nil {
			t.Errorf("%s is not well-formed: %v", f.name, err)
		}
	}
	want := []string{"bench-e1.svg", "bench-e1-scaling.svg", "bench-t1.svg", "bench-l1.svg"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("plot files (-want +got):\n%s", diff)
	}
	for i, impls := range [][]string{
		{"raw-c", "gnet", "uvevent", "100k", "6.3"},
		{"gnet-1", "uvevent-2r"},
		{"raw-c", "uvevent"},
		{"raw-c", "uvevent"},
	} {
		for _, s := range impls {
			if !strings.Contains(files[i].svg, ">"+s+"<") {
				t.Errorf("%s has no label %q", files[i].name, s)
			}
		}
	}
	if got := plots(mustParse(t, "X1 raw-c rtt_ns=1")); len(got) != 0 {
		t.Errorf("plots of results without E1, T1 or L1 = %d files, want none", len(got))
	}
}

func TestT1Series(t *testing.T) {
	got := t1Series(mustParse(t,
		"T1 uvevent wall_ns=500000000",
		"T1@1e4 uvevent wall_ns=100000000",
		"T1@1e5 uvevent wall_ns=110000000",
		"T1@1e5 raw-c wall_ns=200000000",
	))
	want := []series{
		{name: "uvevent", points: []point{{1e4, 0.1}, {1e5, 0.11}, {1e6, 0.5}}},
		{name: "raw-c", points: []point{{1e5, 0.2}}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(series{}, point{})); diff != "" {
		t.Errorf("t1Series (-want +got):\n%s", diff)
	}
}

func TestTicks(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		log    bool
		want   []float64
	}{
		{4, 6, true, []float64{1e4, 1e5, 1e6}},
		{0, 10, false, []float64{0, 2, 4, 6, 8, 10}},
		{-1000, 2000, false, []float64{-1000, -500, 0, 500, 1000, 1500, 2000}},
	} {
		if diff := cmp.Diff(tt.want, ticks(tt.lo, tt.hi, tt.log)); diff != "" {
			t.Errorf("ticks(%v, %v, %v) (-want +got):\n%s", tt.lo, tt.hi, tt.log, diff)
		}
	}
}

func TestFormatShort(t *testing.T) {
	for v, want := range map[float64]string{
		100119: "100.1k", 6.84: "6.84", 2400000: "2.4M", 0.11: "0.11", 950: "950", -1: "-1", 12000: "12k", math.Copysign(0, -1): "0",
	} {
		if got := formatShort(v); got != want {
			t.Errorf("formatShort(%v) = %q, want %q", v, got, want)
		}
	}
}
