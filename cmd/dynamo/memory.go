package main

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// Memory defaults: see config.Config.MemoryLimit.
const (
	limitedGCPercent = 400 // GOGC under a memory limit, while the live heap is small
	// heapFloor is the heap size below which collecting is not worth its
	// latency: GOGC is set so that the heap may grow to it (at most
	// limitedGCPercent), and falls back to Go's 100 once the live heap is
	// half of it, so that many resources do not cost 5× their memory.
	heapFloor     = 256 << 20
	tuneGCEvery   = time.Second
	minGCPercent  = 100
	liveHeapGauge = "/gc/heap/live:bytes"
)

// memorySettings is what applyMemory decided, for the start-up log line.
type memorySettings struct {
	Limit     int64  // bytes; 0: none set by dynamo
	GCPercent int    // 0: left alone
	Source    string // "config", "auto", "env" or "none"
}

// applyMemory sets the Go runtime's memory limit and GC target from the
// configuration, unless GOMEMLIMIT / GOGC are set in the environment (the
// operator's explicit choice wins). total reads the memory available to the
// process (nil: the machine's or the cgroup's).
func applyMemory(cfg *config.Config, total func() int64) memorySettings {
	if os.Getenv("GOMEMLIMIT") != "" {
		return memorySettings{Source: "env"}
	}
	limit, source := int64(cfg.MemoryLimit), "config"
	if limit == 0 {
		if total == nil {
			total = availableMemory
		}
		// Half of what the process may use, uncapped: a limit below the live
		// heap of many resources would make the collector run without end
		// (a fixed 2 GiB did, at 1,000,000 resources).
		limit, source = total()/2, "auto"
	}
	if limit <= 0 {
		return memorySettings{Source: "none"}
	}
	debug.SetMemoryLimit(limit)
	st := memorySettings{Limit: limit, Source: source}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(limitedGCPercent)
		st.GCPercent = limitedGCPercent
	}
	return st
}

// gcPercentFor is the GOGC that lets a heap whose live part is live grow to
// heapFloor, between minGCPercent and limitedGCPercent.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return limitedGCPercent
	}
	p := int((heapFloor - int64(min(live, heapFloor))) * 100 / int64(live))
	return max(minGCPercent, min(limitedGCPercent, p))
}

// tuneGC adjusts GOGC to the live heap every tuneGCEvery until ctx ends
// (only when applyMemory chose GOGC itself).
func tuneGC(ctx context.Context, st memorySettings) {
	if st.GCPercent == 0 {
		return
	}
	sample := []metrics.Sample{{Name: liveHeapGauge}}
	t := time.NewTicker(tuneGCEvery)
	defer t.Stop()
	last := st.GCPercent
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if p := gcPercentFor(sample[0].Value.Uint64()); p != last {
			debug.SetGCPercent(p)
			last = p
		}
	}
}

// logMemory writes the memory settings at start-up.
func logMemory(log *slog.Logger, st memorySettings) {
	log.Info("memory", slog.String("source", st.Source), slog.Int64("limit_bytes", st.Limit), slog.Int("gc_percent", st.GCPercent))
}

// availableMemory is the memory this process may use: the cgroup v2 limit
// when there is one, else the machine's total; 0 when neither is known.
func availableMemory() int64 {
	machine := memTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (machine == 0 || v < machine) {
			return v
		}
	}
	return machine
}

// memTotal reads MemTotal from /proc/meminfo; 0 when it cannot.
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
