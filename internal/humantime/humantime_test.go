package humantime

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Millisecond, "2s"},
		{90 * time.Second, "1m30s"},
		{15 * time.Minute, "15m"},
		{26*time.Hour + 5*time.Second, "1d2h5s"},
		{250 * time.Millisecond, "250ms"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestRelative checks the relative times the pages show: seconds dropped
// past an hour, minutes past a day, "now" at zero.
func TestRelative(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{time.Second, "in 1s"},
		{-time.Second, "1s ago"},
		{4*time.Minute + 10*time.Second, "in 4m10s"},
		{-(time.Hour - time.Second), "59m59s ago"},
		{time.Hour + 59*time.Second, "in 1h"},
		{-(2*time.Hour + 5*time.Minute + 30*time.Second), "2h5m ago"},
		{24*time.Hour - time.Second, "in 23h59m"},
		{24*time.Hour + 59*time.Minute, "in 1d"},
		{-(3*24*time.Hour + 4*time.Hour + 30*time.Minute), "3d4h ago"},
		{-2 * time.Millisecond, "2ms ago"},
	} {
		if got := string(AppendRelative(nil, tc.d)); got != tc.want {
			t.Errorf("AppendRelative(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
