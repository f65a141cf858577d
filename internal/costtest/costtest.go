// Package costtest measures what a request or an extraction costs against
// a reference measured in the same run, for the tests that hold dynamo to
// linear cost (config, extractor, api). Only tests import it.
package costtest

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Best is the least time of n runs of f, and the bytes the last run
// allocated.
func Best(n int, f func()) (time.Duration, uint64) {
	best := time.Duration(1 << 62)
	var alloc uint64
	for range n {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		f()
		best = min(best, time.Since(start))
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
	}
	return best, alloc
}

// FlatPage is an unannotated page about size bytes long: a list of items,
// each a link, nothing nested deeper than the list.
func FlatPage(size int) string {
	var b strings.Builder
	b.WriteString("<html><head><title>News</title></head><body><ul>\n")
	for i := 0; b.Len() < size-30; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/n/%d\">Item %d</a></li>\n", i, i)
	}
	b.WriteString("</ul></body></html>")
	return b.String()
}
