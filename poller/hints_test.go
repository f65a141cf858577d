package poller

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"
)

func TestServerHints(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		header     http.Header
		maxAge     time.Duration
		retryAfter time.Duration
	}{
		{"none", http.Header{}, 0, 0},
		{"max-age", http.Header{"Cache-Control": {"public, max-age=600"}}, 10 * time.Minute, 0},
		{"no-cache wins", http.Header{"Cache-Control": {"max-age=600, no-cache"}}, 0, 0},
		{"huge max-age capped", http.Header{"Cache-Control": {"max-age=99999999"}}, MaxHintFloor, 0},
		{"bad max-age", http.Header{"Cache-Control": {"max-age=soon"}}, 0, 0},
		{"retry-after seconds", http.Header{"Retry-After": {"120"}}, 0, 2 * time.Minute},
		{"retry-after date", http.Header{"Retry-After": {now.Add(time.Hour).Format(http.TimeFormat)}}, 0, time.Hour},
		{"retry-after past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, 0},
		{"retry-after garbage", http.Header{"Retry-After": {"later"}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maxAge(tc.header); got != tc.maxAge {
				t.Errorf("maxAge = %v, want %v", got, tc.maxAge)
			}
			if got := retryAfter(tc.header, now); got != tc.retryAfter {
				t.Errorf("retryAfter = %v, want %v", got, tc.retryAfter)
			}
		})
	}
}

func ExampleTune() {
	// Minutes between the updates of a page.
	var iv []time.Duration
	for _, m := range []int{10, 12, 9, 11, 10, 30, 31, 29, 30} {
		iv = append(iv, time.Duration(m)*time.Minute)
	}
	alpha, mse := Tune(iv)
	rmse := time.Duration(math.Sqrt(mse) * float64(time.Second))
	fmt.Printf("α=%.2f rmse=%v next=%v\n", alpha, rmse.Round(time.Second), Forecast(iv, alpha).Round(time.Second))
	// Output: α=0.04 rmse=7m16s next=29m58s
}
