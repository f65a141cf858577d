package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

const tuneHelp = `[FILE|-]

Reads update times, one per line: an RFC 3339 time (2026-11-21T10:35:00Z) or
a clock time HH:MM (a clock time earlier than the previous one is on the next
day). Blank lines and lines starting with # are ignored; at least 3 times are
needed. Without FILE, or with -, reads standard input.

Prints, one "key: value" per line:
  times:     how many update times were read
  intervals: how many intervals between them (times − 1)
  mean:      their mean
  alpha:     the α in [0,1] that minimises the MSE of the one-step-ahead
             estimates of single exponential smoothing (golden-section search)
  mse:       that MSE, in squared minutes
  rmse:      its square root, as a duration
  next:      the estimate of the next interval, τ_{n+1}, with that α`

func cmdTune(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune", tuneHelp, stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &exitError{code: 2, err: fmt.Errorf("tune: want at most one FILE or -, got %d arguments", fs.NArg())}
	}
	name, in := "-", stdin
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("tune: %w", err)}
		}
		defer f.Close() //nolint:errcheck // read-only file
		in = f
	}
	times, err := readUpdateTimes(in, name)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("tune: %w", err)}
	}
	if len(times) < 3 {
		return &exitError{code: 1, err: fmt.Errorf("tune: %s: need at least 3 update times, got %d", name, len(times))}
	}
	intervals := make([]time.Duration, len(times)-1)
	var sum time.Duration
	for i := range intervals {
		intervals[i] = times[i+1].Sub(times[i])
		sum += intervals[i]
	}
	alpha, mse := poller.Tune(intervals)
	_, err = fmt.Fprintf(stdout, "times: %d\nintervals: %d\nmean: %s\nalpha: %.4f\nmse: %.4f min²\nrmse: %s\nnext: %s\n",
		len(times), len(intervals),
		(sum / time.Duration(len(intervals))).Round(time.Second),
		alpha,
		mse/3600,
		time.Duration(math.Sqrt(mse)*float64(time.Second)).Round(time.Second),
		poller.Forecast(intervals, alpha).Round(time.Second))
	return err
}

// readUpdateTimes parses the tune input; errors name the line.
func readUpdateTimes(r io.Reader, name string) ([]time.Time, error) {
	var times []time.Time
	var clock, absolute bool
	day := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // clock times are laid out from an arbitrary day
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var t time.Time
		if hm, err := time.Parse("15:04", line); err == nil {
			if absolute {
				return nil, fmt.Errorf("%s:%d: clock time %q mixed with RFC 3339 times", name, n, line)
			}
			clock = true
			t = day.Add(time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute)
			if len(times) > 0 && t.Before(times[len(times)-1]) {
				day = day.AddDate(0, 0, 1) // going backwards: the next day
				t = t.AddDate(0, 0, 1)
			}
		} else if ts, err := time.Parse(time.RFC3339, line); err == nil {
			if clock {
				return nil, fmt.Errorf("%s:%d: RFC 3339 time %q mixed with clock times", name, n, line)
			}
			absolute = true
			t = ts
			if len(times) > 0 && t.Before(times[len(times)-1]) {
				return nil, fmt.Errorf("%s:%d: %s is before the previous time %s", name, n, line, times[len(times)-1].Format(time.RFC3339))
			}
		} else {
			return nil, fmt.Errorf("%s:%d: %q is neither an RFC 3339 time nor HH:MM", name, n, line)
		}
		times = append(times, t)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: line too long: %w", name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return times, nil
}
