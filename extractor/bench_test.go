package extractor_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor"
)

// legacyPage generates, deterministically, a ~1 MB table-layout news page
// with n annotated items: title, link, description with markup, date.
func legacyPage(n int) []byte { return legacyPageMarkup(n, true) }

// legacyPageMarkup is legacyPage; without markup, the descriptions are plain
// text (so nothing goes through the sanitizer).
func legacyPageMarkup(n int, markup bool) []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>Legacy News</title><script type="text/javascript">function pop(u){window.open(u,'x','width=400');}</script>
<style>td.news{font:12px Verdana} .date{color:#999}</style></head>
<body bgcolor="#ffffff"><table width="100%" border="0" cellpadding="2" cellspacing="0"><tr><td>
<!-- <channel:title> -->Legacy News<!-- </channel:title> -->
<!-- <channel:description> -->All the news that fits, since 1998.<!-- </channel:description> -->
<!-- <channel:image url="/img/logo.gif" title="Legacy News" link="/" /> -->
</td></tr>
`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<tr><td class="news" valign="top"><font face="Verdana" size="2">
<b><!-- <item:title index="%d"> -->Story number %d: council approves the budget &amp; more<!-- </item:title> --></b><br>
<span class="date"><!-- <item:extension index="%d" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->December %02d, 2005 @ %02d:%02d AM<!-- </item:extension> --></span>
<!-- <item:link index="%d"> --><a href="/news/%d/story.html" onclick="pop(this.href)"><!-- </item:link> -->read</a>
<!-- <item:description index="%d"> -->%s<!-- </item:description> -->
</font></td><td width="120"><a href="/ads/%d"><img src="/ads/%d.gif" width="120" height="60" border="0"></a></td></tr>
`, i, i, i, i%28+1, i%12+1, i%60, i, i, i, description(i, markup), i, i)
	}
	b.WriteString("</table></body></html>\n")
	return b.Bytes()
}

func description(i int, markup bool) string {
	if markup {
		return fmt.Sprintf(`The council met on <i>Tuesday</i> and approved the <a href="/budget/%d">budget</a> for next year,
after a long debate about roads, schools&nbsp;and the library, which the mayor called "overdue". <img src="/img/p%d.jpg" alt="photo"> More at eleven.`, i, i)
	}
	return fmt.Sprintf(`The council met on Tuesday and approved the budget number %d for next year,
after a long debate about roads, schools&nbsp;and the library, which the mayor called "overdue".             Photo %d. More at eleven.`, i, i)
}

// BenchmarkExtractPlain is BenchmarkExtract on the same page with plain-text
// descriptions: the extraction without the sanitizer.
func BenchmarkExtractPlain(b *testing.B) { benchExtract(b, legacyPageMarkup(1000, false)) }

func BenchmarkExtract(b *testing.B) { benchExtract(b, legacyPage(1000)) }

// benchExtract extracts data, a page of 1,000 items, in a loop.
func benchExtract(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Document.Items) != 1000 {
			b.Fatalf("%d items", len(res.Document.Items))
		}
	}
}

// BenchmarkTokenize only runs the tokenizer over the same bytes: the floor.
func BenchmarkTokenize(b *testing.B) {
	data := legacyPage(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(data))
		for z.Next() != html.ErrorToken {
		}
		if err := z.Err(); !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
	}
}

func TestBenchmarkPage(t *testing.T) {
	data := legacyPage(1000)
	if len(data) < 900_000 || len(data) > 1_300_000 {
		t.Errorf("benchmark page is %d bytes, want about 1 MB", len(data))
	}
	res, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 0 {
		t.Errorf("diagnostics on the benchmark page: %q", diagStrings(res.Diagnostics)[:1])
	}
	checkDocument(t, res.Document, true)
}

// cpuTime is the CPU time (user+system, all threads, so GC included) this
// process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestThroughputCPU compares Extract with the bare tokenizer by CPU time
// rather than wall time, which on a shared machine measures mostly the
// neighbours. Opt-in: DYNAMO_BENCH_CPU=1 go test -run ThroughputCPU -v ./extractor
func TestThroughputCPU(t *testing.T) {
	if os.Getenv("DYNAMO_BENCH_CPU") != "1" {
		t.Skip("set DYNAMO_BENCH_CPU=1 to measure")
	}
	const rounds = 50
	measure := func(data []byte, f func([]byte)) float64 {
		f(data) // warm up
		runtime.GC()
		start := cpuTime(t)
		for range rounds {
			f(data)
		}
		return float64(len(data)) * rounds / (cpuTime(t) - start).Seconds() / 1e6
	}
	extract := func(data []byte) {
		if _, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench"}); err != nil {
			t.Fatal(err)
		}
	}
	tokenize := func(data []byte) {
		z := html.NewTokenizer(bytes.NewReader(data))
		for z.Next() != html.ErrorToken {
		}
	}
	markup, plain := legacyPageMarkup(1000, true), legacyPageMarkup(1000, false)
	tok := measure(markup, tokenize)
	ext := measure(markup, extract)
	tokPlain := measure(plain, tokenize)
	extPlain := measure(plain, extract)
	t.Logf("by CPU time (GOMAXPROCS %d): Tokenize %.1f MB/s, Extract %.1f MB/s (ratio %.2f); plain descriptions: Tokenize %.1f MB/s, Extract %.1f MB/s (ratio %.2f)",
		runtime.GOMAXPROCS(0), tok, ext, ext/tok, tokPlain, extPlain, extPlain/tokPlain)
}

// twentyItems is a page of 20 items whose first item's description carries
// version v: successive versions differ in that one item, as most changed
// pages do.
func twentyItems(v int) []byte {
	page := legacyPage(20)
	return bytes.Replace(page, []byte("Story number 1:"), fmt.Appendf(nil, "Story number 1 (version %d):", v), 1)
}

// BenchmarkReextract1of20 extracts successive versions of a 20-item page
// in which one item changed each time, with the poller's description cache:
// 19 descriptions come from the cache, one is sanitized. Compare with
// BenchmarkTokenize20 (the bare tokenizer on the same bytes) and
// BenchmarkExtract20 (no cache).
func BenchmarkReextract1of20(b *testing.B) {
	pages := make([][]byte, 256)
	for i := range pages {
		pages[i] = twentyItems(i)
	}
	cache := extractor.NewDescriptionCache(0)
	b.SetBytes(int64(len(pages[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		data := pages[i%len(pages)]
		if i%len(pages) == 0 { // a page seen before would be all hits: change another item
			data = bytes.Replace(data, []byte("Story number 2:"), fmt.Appendf(nil, "Story number 2 (round %d):", i), 1)
		}
		if _, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench", Descriptions: cache}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract20 is a cold extraction of the 20-item page (no cache).
func BenchmarkExtract20(b *testing.B) {
	data := twentyItems(0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTokenize20 is the bare tokenizer over the 20-item page.
func BenchmarkTokenize20(b *testing.B) {
	data := twentyItems(0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(data))
		for z.Next() != html.ErrorToken {
		}
	}
}

// BenchmarkBluemonday20 prices the sanitizer of a cold extraction of the
// 20-item page, beside BenchmarkTokenize20 in the same run: "batch" is
// bluemonday with the feed policy over the page's 20 descriptions, joined
// and with their URLs resolved (what a cold Extract20 sends it); "urltags"
// over only their 40 <a href> and <img src> tags, the part bluemonday
// changes in any case (it adds rel="nofollow" and rewrites URLs), so the
// least any extraction that keeps bluemonday pays.
func BenchmarkBluemonday20(b *testing.B) {
	var batch, tags bytes.Buffer
	for i := 1; i <= 20; i++ {
		d := bytes.NewBufferString(description(i, true))
		resolved := bytes.ReplaceAll(d.Bytes(), []byte(`="/`), []byte(`="https://example.org/`))
		if i > 1 {
			batch.WriteString(" dynamoseparator ")
		}
		batch.Write(resolved)
		z := html.NewTokenizer(bytes.NewReader(resolved))
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			if tt == html.StartTagToken {
				if name, hasAttr := z.TagName(); hasAttr && (string(name) == "a" || string(name) == "img") {
					tags.Write(z.Raw())
					tags.WriteByte(' ')
				}
			}
		}
	}
	if n := bytes.Count(tags.Bytes(), []byte("<")); n != 40 {
		b.Fatalf("%d URL tags, want 40", n)
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{{"batch", batch.Bytes()}, {"urltags", tags.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if extractor.SanitizeWithFeedPolicy(c.in) == "" {
					b.Fatal("empty output")
				}
			}
		})
	}
}

// BenchmarkExtractSelect extracts the page of BenchmarkExtract (1,000
// items) with selectors instead of its annotations: the selector front end
// (a tree, then CSS queries per item) beside the streaming one, through the
// same back end.
func BenchmarkExtractSelect(b *testing.B) {
	data := legacyPage(1000)
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{
		Item: "td.news", Title: "b", Link: "a @href", Description: "font", Date: "span.date",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := sel.Extract(bytes.NewReader(data), extractor.Options{URL: page, RSSID: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Document.Items) != 1000 {
			b.Fatalf("%d items", len(res.Document.Items))
		}
	}
}
