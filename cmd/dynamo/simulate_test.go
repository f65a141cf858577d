package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"github.com/dynamo-rss/dynamo/poller/sim"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulate runs `dynamo simulate` end to end on a small synthetic trace
// and checks the table, the CSV, both plots and the exported trace; then it
// replays the exported trace from stdin and gets the same flat figures.
func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "out.csv")
	tracePath := filepath.Join(dir, "trace.csv")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"simulate", "--feeds", "15", "--seed", "3", "--k", "10",
		"--intervals", "6h,24h", "--equal-delay=false", "--csv", csvPath, "--plots", dir,
		"--write-trace", tracePath}, strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"15 feeds", "latest 10 items", "budget Ī = 6h", "budget Ī = 24h", "smart α=auto", "rate (scaled clamps)", "budget"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	rows := readCSVFile(t, csvPath)
	if len(rows) != 1+2*len(sim.Standard()) || rows[0][0] != "interval_h" {
		t.Fatalf("csv: %d rows, header %v", len(rows), rows[0])
	}
	for _, name := range []string{"freshness-delay-k10.png", "freshness-page-k10.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		_ = f.Close() // read-only
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 300 {
			t.Errorf("%s is %v", name, b)
		}
	}

	// Replay the exported trace: flat's figures do not depend on how the
	// trace got in (times are written to the second, flat polls on the hour).
	trace, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	csv2 := filepath.Join(dir, "replay.csv")
	stdout.Reset()
	err = run(context.Background(), []string{"simulate", "--trace", "-", "--k", "10",
		"--start", "2026-01-05T00:00:00Z", "--end", "2026-04-06T00:00:00Z",
		"--intervals", "6h,24h", "--equal-delay=false", "--csv", csv2}, bytes.NewReader(trace), &stdout, &stderr)
	if err != nil {
		t.Fatalf("simulate --trace: %v\n%s", err, stderr.String())
	}
	replay := readCSVFile(t, csv2)
	for _, i := range []int{1, 1 + len(sim.Standard())} { // flat at 6h and 24h
		if replay[i][2] != "flat" || replay[i][4] != rows[i][4] || replay[i][6] != rows[i][6] {
			t.Errorf("replayed flat row %v, generated %v", replay[i], rows[i])
		}
	}
}

func TestSimulateFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--intervals", "6h,x"}, "--intervals"},
		{[]string{"--k", "-1"}, "--k"},
		{[]string{"--trace", "/nonexistent/trace.csv"}, "no such file"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--trace", "-", "--start", "yesterday"}, "--start"},
		{[]string{"--feeds", "5", "--plots", ".", "--watch", "nope"}, "no feed"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"simulate"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one containing %q", err, tt.want)
			}
		})
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"simulate", "--help"}, strings.NewReader(""), &stdout, &stdout); err != nil {
		t.Fatalf("--help: %v", err)
	}
	if !strings.Contains(stdout.String(), "-equal-delay") {
		t.Errorf("--help output:\n%s", stdout.String())
	}
	var ee *exitError
	err := run(context.Background(), []string{"simulate", "--bogus"}, strings.NewReader(""), &stdout, &stdout)
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("unknown flag: %v", err)
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}
