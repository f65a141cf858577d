package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

// runTune runs `dynamo tune` with input on stdin and returns stdout as a map.
func runTune(t *testing.T, input string, args ...string) (map[string]string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), append([]string{"tune"}, args...), strings.NewReader(input), &stdout, &stderr)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			out[k] = v
		}
	}
	return out, err
}

func TestTuneKnownSeries(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		alpha       string
		mse         string
		next        string
	}{
		{
			// Constant intervals: any α gives zero error; ties resolve to 0.
			name:  "constant",
			input: "10:00\n10:05\n10:10\n10:15\n10:20\n",
			alpha: "0.0000", mse: "0.0000 min²", next: "5m0s",
		},
		{
			// A step from 10 to 30 minutes: α = 0 (follow the last interval) is best.
			name:  "step",
			input: "# step\n2026-01-01T00:00:00Z\n2026-01-01T00:10:00Z\n2026-01-01T00:20:00Z\n2026-01-01T00:30:00Z\n2026-01-01T01:00:00Z\n2026-01-01T01:30:00Z\n2026-01-01T02:00:00Z\n",
			alpha: "0.0000", mse: "80.0000 min²", next: "30m0s",
		},
		{
			// Crossing midnight: 23:50 → 00:10 is 20 minutes, the next day.
			name:  "midnight",
			input: "23:30\n23:50\n\n00:10\n00:30\n",
			alpha: "0.0000", mse: "0.0000 min²", next: "20m0s",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runTune(t, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if out["alpha"] != tc.alpha || out["mse"] != tc.mse || out["next"] != tc.next {
				t.Fatalf("got %v, want alpha %s mse %s next %s", out, tc.alpha, tc.mse, tc.next)
			}
		})
	}
}

// The six series of the Dynamo paper's Table 3 (CNN and ANSA). The paper's
// best α (0.005, 0.236, 0.994, 0.618, 0.145, 0.005) were fitted on the longer
// series it collected, of which it prints only six update times per test, so
// they cannot be reproduced from the table: below is what our tuner gives on
// the printed times, checked to be the minimum of MSE(α) over a fine grid.
func TestTuneTable3(t *testing.T) {
	for _, tc := range []struct {
		times      string
		paperAlpha float64
		ourAlpha   string
	}{
		{"10:35 10:36 10:36 10:47 10:54 10:56", 0.005, "0.7461"},
		{"14:25 14:47 15:19 15:29 15:41 15:44", 0.236, "0.3769"},
		{"13:51 13:52 13:54 13:56 13:57 14:13", 0.994, "0.5811"},
		{"17:02 17:16 17:31 17:45 17:55 18:25", 0.618, "1.0000"},
		{"19:47 19:56 20:11 20:32 21:04 21:34", 0.145, "0.0000"},
		{"07:58 08:15 08:31 09:24 10:08 10:50", 0.005, "0.2866"},
	} {
		t.Run(tc.times, func(t *testing.T) {
			out, err := runTune(t, strings.ReplaceAll(tc.times, " ", "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if out["alpha"] != tc.ourAlpha {
				t.Fatalf("α = %s, want %s (paper, on a longer series: %v)", out["alpha"], tc.ourAlpha, tc.paperAlpha)
			}
			var iv []time.Duration
			f := strings.Fields(tc.times)
			for i := 1; i < len(f); i++ {
				a, _ := time.Parse("15:04", f[i-1])
				b, _ := time.Parse("15:04", f[i])
				iv = append(iv, b.Sub(a))
			}
			alpha, _ := strconv.ParseFloat(out["alpha"], 64)
			best := poller.SmoothingMSE(iv, alpha)
			for a := 0.0; a <= 1.0001; a += 0.01 {
				if m := poller.SmoothingMSE(iv, a); m < best-1e-6*best-1e-9 {
					t.Fatalf("α=%.2f has MSE %v < tuned α's %v", a, m, best)
				}
			}
		})
	}
}

func TestTuneErrors(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"too few", "10:00\n10:05\n", "need at least 3 update times, got 2"},
		{"garbage", "10:00\n\nten past ten\n", "-:3: \"ten past ten\" is neither an RFC 3339 time nor HH:MM"},
		{"mixed", "10:00\n2026-01-01T10:00:00Z\n", "-:2: RFC 3339 time"},
		{"backwards", "2026-01-01T10:00:00Z\n2026-01-01T09:00:00Z\n2026-01-01T11:00:00Z\n", "-:2: 2026-01-01T09:00:00Z is before the previous time"},
		{"empty", "# nothing\n", "got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runTune(t, tc.input)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want exit 1 with %q", err, tc.want)
			}
		})
	}
}

func TestTuneFileAndUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "times.txt")
	if err := os.WriteFile(path, []byte("10:00\n10:10\n10:20\n10:30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runTune(t, "", path)
	if err != nil || out["next"] != "10m0s" || out["times"] != "4" || out["intervals"] != "3" {
		t.Fatalf("%v %v", out, err)
	}
	if _, err := runTune(t, "", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
	if _, err := runTune(t, "", "a", "b"); err == nil {
		t.Fatal("two files accepted")
	}
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"tune", "--help"}, strings.NewReader(""), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "usage: dynamo tune") || !strings.Contains(stdout.String(), "alpha:") {
		t.Fatalf("usage: %s", stdout.String())
	}
}
