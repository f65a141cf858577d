package postgres_test

import (
	"math"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage/postgres"
)

// TestAddNSSaturates checks the instants stored as nanoseconds: a duration
// added either way, saturating at each end of int64 instead of wrapping,
// and exact up to it.
func TestAddNSSaturates(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		d    time.Duration
		want int64
	}{
		{5, 10, 15},
		{0, -time.Second, -1e9},
		{1e9, -time.Second, 0},
		{math.MaxInt64 - 10, 10, math.MaxInt64},
		{math.MaxInt64 - 10, 11, math.MaxInt64},
		{math.MaxInt64 - 10, 9, math.MaxInt64 - 1},
		{math.MinInt64 + 10, -10, math.MinInt64},
		{math.MinInt64 + 10, -11, math.MinInt64},
		{math.MinInt64 + 10, -9, math.MinInt64 + 1},
		{math.MaxInt64, -1, math.MaxInt64 - 1},
		{math.MinInt64, 1, math.MinInt64 + 1},
	} {
		if got := postgres.AddNS(tc.ns, tc.d); got != tc.want {
			t.Errorf("addNS(%d, %d) = %d, want %d", tc.ns, tc.d, got, tc.want)
		}
	}
}
