package main

import (
	"runtime/debug"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

func TestApplyMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	prevLimit, prevGC := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(prevLimit); debug.SetGCPercent(prevGC) })

	for _, tc := range []struct {
		name   string
		limit  config.Size
		total  int64
		want   int64
		source string
	}{
		{"configured", 512 << 20, 64 << 30, 512 << 20, "config"},
		{"auto: half the memory", 0, 2 << 30, 1 << 30, "auto"},
		{"auto: not capped", 0, 64 << 30, 32 << 30, "auto"},
		{"auto: memory unknown", 0, 0, 0, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(1 << 62)
			debug.SetGCPercent(100)
			st := applyMemory(&config.Config{MemoryLimit: tc.limit}, func() int64 { return tc.total })
			if st.Limit != tc.want || st.Source != tc.source {
				t.Fatalf("applyMemory = %+v, want limit %d from %s", st, tc.want, tc.source)
			}
			if tc.want > 0 {
				if got := debug.SetMemoryLimit(-1); got != tc.want {
					t.Errorf("runtime memory limit = %d, want %d", got, tc.want)
				}
				if got := debug.SetGCPercent(100); got != limitedGCPercent {
					t.Errorf("GC percent = %d, want %d", got, limitedGCPercent)
				}
			}
		})
	}
	t.Run("environment wins", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "300MiB")
		debug.SetMemoryLimit(1 << 62)
		if st := applyMemory(&config.Config{MemoryLimit: 512 << 20}, nil); st.Source != "env" || debug.SetMemoryLimit(-1) != 1<<62 {
			t.Errorf("GOMEMLIMIT set: applyMemory = %+v changed the limit", st)
		}
	})
	if availableMemory() <= 0 {
		t.Log("no memory size readable here (not Linux?)")
	}
}

func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, limitedGCPercent},
		{10 << 20, limitedGCPercent},  // a small heap grows to 5×, not to the floor
		{64 << 20, 300},               // 64 MiB may grow to 256 MiB
		{128 << 20, minGCPercent},     // half the floor: Go's default
		{1 << 30, minGCPercent},       // many resources: never below Go's default
		{heapFloor + 1, minGCPercent}, // past the floor
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}
