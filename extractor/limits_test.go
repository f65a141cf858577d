package extractor_test

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// generated is a page produced on the fly: head, then body repeated until
// size bytes, then tail; it never holds the page in memory. Every
// sampleEvery bytes it samples the live heap, so a test can see the peak
// while Extract runs.
type generated struct {
	parts       []string // head, body, tail
	size        int64
	n           int64
	cur         string
	stage       int
	sampleEvery int64
	nextSample  int64
	maxHeap     uint64
}

func newGenerated(head, body, tail string, size int64) *generated {
	return &generated{parts: []string{head, body, tail}, size: size, cur: head}
}

func (g *generated) Read(p []byte) (int, error) {
	for g.cur == "" {
		switch {
		case g.stage == 0 || g.stage == 1 && g.n < g.size:
			g.stage = 1
			g.cur = g.parts[1]
		case g.stage == 1:
			g.stage = 2
			g.cur = g.parts[2]
		default:
			return 0, io.EOF
		}
	}
	k := copy(p, g.cur)
	g.cur = g.cur[k:]
	g.n += int64(k)
	if g.sampleEvery > 0 && g.n >= g.nextSample {
		g.nextSample = g.n + g.sampleEvery
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		g.maxHeap = max(g.maxHeap, m.HeapAlloc)
	}
	return k, nil
}

func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

const chanTitle = "<!-- <channel:title> -->T<!-- </channel:title> -->\n"

// TestFiftyMegabytes streams a generated 50 MB page and checks that the live
// heap stays far below the page size: the extractor does not buffer it.
func TestFiftyMegabytes(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB page")
	}
	body := `<div class="story"><h2><a href="/a/1">A headline that repeats</a></h2>` +
		`<p>Some text &amp; an entity, <b>bold</b>, <i>italic</i> and a <br> break.</p>` +
		"<!-- an ordinary comment --><script>var x = '<!-- <item:title index=\"1\"> -->';</script></div>\n"
	head := "<html><head><meta charset=utf-8></head><body>\n" + chanTitle +
		`<!-- <item:title index="1"> -->Item<!-- </item:title> --><!-- <item:description index="1"> -->`
	tail := "<!-- </item:description> --></body></html>\n"
	size := int64(50 << 20)
	if raceEnabled {
		size = 10 << 20
	}
	g := newGenerated(head, body, tail, size)
	g.sampleEvery = 2 << 20
	base := heapNow()
	res, err := extractor.Extract(g, extractor.Options{URL: page})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if g.n < size {
		t.Fatalf("read %d bytes, want at least %d", g.n, size)
	}
	// The description region spans the whole page: its text and HTML are cut
	// at MaxValueBytes (1 MiB each) and reported, not silently truncated.
	if !strings.Contains(strings.Join(diagStrings(res.Diagnostics), "\n"), "value longer than 1048576 bytes: cut") {
		t.Errorf("no diagnostic for the cut description: %q", diagStrings(res.Diagnostics))
	}
	if d := len(res.Document.Items[0].Description); d > extractor.DefaultMaxValueBytes {
		t.Errorf("description is %d bytes, more than the limit", d)
	}
	grew := int64(g.maxHeap) - int64(base)
	t.Logf("%d MB page: peak live heap grew by %.1f MB", size>>20, float64(grew)/(1<<20))
	if grew > 24<<20 {
		t.Errorf("heap grew by %d MB while extracting a %d MB page: the page is being buffered", grew>>20, size>>20)
	}
}

// TestManyRegions extracts 100,000 regions: items beyond MaxItems are
// ignored with one error.
func TestManyRegions(t *testing.T) {
	var b strings.Builder
	b.WriteString(chanTitle)
	for i := 1; i <= 100_000; i++ {
		fmt.Fprintf(&b, "<!-- <item:title index=\"%d\"> -->Item %d<!-- </item:title> -->\n", i, i)
	}
	res, err := extractor.Extract(strings.NewReader(b.String()), extractor.Options{URL: page})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Document.Items); n != extractor.DefaultMaxItems {
		t.Errorf("%d items, want %d", n, extractor.DefaultMaxItems)
	}
	want := []string{"10002:1: error: more than 10000 items: item 10001 and any further new item are ignored"}
	if got := diagStrings(res.Diagnostics); len(got) != 1 || got[0] != want[0] {
		t.Errorf("diagnostics %q, want %q", got, want)
	}
	checkDocument(t, res.Document, false)
}

// TestDeepNesting opens 10,000 nested regions and closes them all.
func TestDeepNesting(t *testing.T) {
	const depth = 10_000
	open := `<!-- <channel:extension uri="http://example.org/" prefix="ex" localName="x"> --><div>`
	var b strings.Builder
	b.WriteString(chanTitle)
	b.WriteString(strings.Repeat(open, depth))
	b.WriteString("deep")
	b.WriteString(strings.Repeat("</div><!-- </channel:extension> -->", depth))
	b.WriteString("<!-- </channel:link> -->")
	res, err := extractor.Extract(strings.NewReader(b.String()), extractor.Options{URL: page})
	if err != nil {
		t.Fatal(err)
	}
	got := diagStrings(res.Diagnostics)
	want := fmt.Sprintf("2:%d: error: <channel:extension> nested deeper than 32 open regions", 1+32*len(open))
	if len(got) != 2 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[1], "closing </channel:link> has no open region") {
		t.Errorf("diagnostics %q, want %q then a closing with no opening", got, want)
	}
	if n := len(res.Document.Channel.Extensions); n != 32 {
		t.Errorf("%d extensions, want 32 (the open-region limit)", n)
	}
	checkDocument(t, res.Document, false)
}

func TestLimits(t *testing.T) {
	t.Run("value bytes", func(t *testing.T) {
		src := "<!-- <channel:title> -->" + strings.Repeat("abcdefghij", 10) + "<!-- </channel:title> -->"
		res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, Limits: extractor.Limits{MaxValueBytes: 25}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Document.Channel.Title; got != "abcdefghijabcdefghijabcde" {
			t.Errorf("title %q", got)
		}
		if got := diagStrings(res.Diagnostics); len(got) != 1 || got[0] != "1:1: error: <channel:title> value longer than 25 bytes: cut" {
			t.Errorf("diagnostics %q", got)
		}
	})
	t.Run("extensions", func(t *testing.T) {
		ext := `<!-- <channel:extension uri="http://example.org/" prefix="ex" localName="x"> -->v<!-- </channel:extension> -->`
		src := chanTitle + strings.Repeat(ext, 5)
		res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, Limits: extractor.Limits{MaxExtensions: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Document.Channel.Extensions); n != 3 {
			t.Errorf("%d extensions, want 3", n)
		}
		if got := diagStrings(res.Diagnostics); len(got) != 1 || !strings.Contains(got[0], "error: more than 3 extensions in the channel") {
			t.Errorf("diagnostics %q", got)
		}
	})
	t.Run("diagnostics", func(t *testing.T) {
		src := chanTitle + strings.Repeat("<!-- </item:title> -->", 50)
		res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, Limits: extractor.Limits{MaxDiagnostics: 10}})
		if err != nil {
			t.Fatal(err)
		}
		got := diagStrings(res.Diagnostics)
		if len(got) != 11 || !strings.HasSuffix(got[10], "warning: 40 more diagnostics not reported (limit 10)") {
			t.Errorf("diagnostics %q", got)
		}
		// The count comes at the last kept diagnostic's position.
		if last, more := res.Diagnostics[9], res.Diagnostics[10]; more.Line != last.Line || more.Col != last.Col || last.Line == 1 && last.Col == 1 {
			t.Errorf("the count at %d:%d, want the last kept one's %d:%d", more.Line, more.Col, last.Line, last.Col)
		}
	})
	t.Run("not annotated past the diagnostics limit", func(t *testing.T) {
		src := strings.Repeat("<!-- </item:title> -->", 50)
		res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, Limits: extractor.Limits{MaxDiagnostics: 10}})
		if !errors.Is(err, extractor.ErrNotAnnotated) || !res.HasErrors() {
			t.Errorf("err %v, diagnostics %q", err, diagStrings(res.Diagnostics))
		}
	})
	t.Run("token bytes", func(t *testing.T) {
		src := chanTitle + "<p>" + strings.Repeat("x", 5000) + "</p>"
		_, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, Limits: extractor.Limits{MaxTokenBytes: 1000}})
		if !errors.Is(err, extractor.ErrTooLarge) || !strings.Contains(err.Error(), "larger than 1000 bytes") {
			t.Errorf("err = %v, want ErrTooLarge naming the token limit", err)
		}
	})
}

// errReader fails after its data.
type errReader struct{ data string }

var errBoom = errors.New("boom")

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errBoom
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	for _, size := range []int{0, 100, 10_000} {
		res, err := extractor.Extract(&errReader{data: chanTitle + strings.Repeat("x", size)}, extractor.Options{URL: page})
		if !errors.Is(err, errBoom) || res == nil {
			t.Errorf("size %d: err = %v, result %v; want the read error and a result", size, err, res)
		}
	}
}

// TestValueLimitBoundary: a value exactly at MaxValueBytes is kept whole and
// not reported; one byte more is cut to at most the limit and reported. The
// cut is checked where it falls after a space (the space written before the
// next word counts) and on the markup of a description, for annotations and
// for selectors alike.
func TestValueLimitBoundary(t *testing.T) {
	tests := []struct {
		name     string
		body     string // a title's or a description's content
		desc     bool
		limit    int
		want     string // the title, or the description's text
		wantHTML string // content:encoded, for a description with markup
		wantCut  bool
	}{
		{name: "title at the limit", body: "abc de", limit: 6, want: "abc de"},
		{name: "title one over, the cut after the space", body: "abc de", limit: 5, want: "abc d", wantCut: true},
		{name: "title one over, the cut on the space", body: "abc de", limit: 4, want: "abc", wantCut: true},
		{name: "title with collapsed spaces at the limit", body: " abc \n\t de ", limit: 6, want: "abc de"},
		{name: "description text at the limit", body: "abc de", desc: true, limit: 6, want: "abc de"},
		{name: "description text one over", body: "abc de", desc: true, limit: 5, want: "abc d", wantCut: true},
		{name: "description markup at the limit", body: "<b>ab</b> cd", desc: true, limit: 12, want: "ab cd", wantHTML: "<b>ab</b> cd"},
		{name: "description markup one over", body: "<b>ab</b> cd", desc: true, limit: 11, want: "ab cd", wantHTML: "<b>ab</b>", wantCut: true},
		{name: "description ending in a tag at the limit", body: "ab <br>", desc: true, limit: 7, want: "ab", wantHTML: "ab <br>"},
		{name: "description ending in a tag one over", body: "ab <br>", desc: true, limit: 6, want: "ab", wantCut: true},
	}
	for _, tc := range tests {
		for _, front := range []string{"annotations", "selectors"} {
			t.Run(tc.name+"/"+front, func(t *testing.T) {
				opts := extractor.Options{URL: page, Limits: extractor.Limits{MaxValueBytes: tc.limit}}
				var res *extractor.Result
				var err error
				if front == "annotations" {
					tag := "channel:title"
					if tc.desc {
						tag = "channel:description"
					}
					src := "<!-- <" + tag + "> -->" + tc.body + "<!-- </" + tag + "> -->"
					if tc.desc {
						src = chanTitle + src
					}
					res, err = extractor.Extract(strings.NewReader(src), opts)
				} else {
					spec := extractor.SelectSpec{Item: "div.i", Title: "h3"}
					if tc.desc {
						spec.Title, spec.Description = "", "p"
					}
					sel, cerr := extractor.CompileSelectors(spec)
					if cerr != nil {
						t.Fatal(cerr)
					}
					src := `<html><head><title>T</title></head><body><div class="i"><h3>` + tc.body + `</h3><p>` + tc.body + `</p></div></body></html>`
					res, err = sel.Extract(strings.NewReader(src), opts)
				}
				if err != nil {
					t.Fatalf("Extract: %v (%q)", err, diagStrings(res.Diagnostics))
				}
				var got, gotHTML string
				switch d := res.Document; {
				case front == "annotations" && !tc.desc:
					got = d.Channel.Title
				case front == "annotations":
					got = d.Channel.Description
					gotHTML, _ = d.Channel.Extensions.ContentEncoded()
				case len(d.Items) != 1:
					t.Fatalf("%d items, want 1", len(d.Items))
				case !tc.desc:
					got = d.Items[0].Title
				default:
					got = d.Items[0].Description
					gotHTML, _ = d.Items[0].Extensions.ContentEncoded()
				}
				if got != tc.want || len(got) > tc.limit {
					t.Errorf("value %q, want %q (limit %d)", got, tc.want, tc.limit)
				}
				if gotHTML != tc.wantHTML {
					t.Errorf("content:encoded %q, want %q", gotHTML, tc.wantHTML)
				}
				cut := strings.Contains(strings.Join(diagStrings(res.Diagnostics), "\n"), fmt.Sprintf("longer than %d bytes: cut", tc.limit))
				if cut != tc.wantCut {
					t.Errorf("cut reported %v, want %v (diagnostics %q)", cut, tc.wantCut, diagStrings(res.Diagnostics))
				}
			})
		}
	}
}

// TestCountLimitsBoundary: each count limit at its value keeps everything
// and reports nothing; one more keeps the limit's worth and says so. Items
// are tried through annotations and through selectors.
func TestCountLimitsBoundary(t *testing.T) {
	const n = 3
	lim := extractor.Limits{MaxItems: n, MaxExtensions: n, MaxDepth: n, MaxDiagnostics: n}
	annotated := func(count int, one func(i int) string) string {
		var b strings.Builder
		b.WriteString(chanTitle)
		for i := 1; i <= count; i++ {
			b.WriteString(one(i))
		}
		return b.String()
	}
	item := func(i int) string {
		return fmt.Sprintf(`<!-- <item:title index="%d"> -->t%d<!-- </item:title> -->`, i, i)
	}
	ext := func(int) string {
		return `<!-- <channel:extension uri="http://example.org/" prefix="ex" localName="x"> -->v<!-- </channel:extension> -->`
	}
	nested := func(count int) string {
		open := `<!-- <channel:extension uri="http://example.org/" prefix="ex" localName="x"> -->`
		return chanTitle + strings.Repeat(open, count) + "deep" + strings.Repeat("<!-- </channel:extension> -->", count)
	}
	stray := func(int) string { return "<!-- </item:title> -->" } // a warning each
	selected := func(count int) string {
		var b strings.Builder
		b.WriteString("<html><head><title>T</title></head><body>")
		for i := 1; i <= count; i++ {
			fmt.Fprintf(&b, `<div class="i"><h3>t%d</h3></div>`, i)
		}
		return b.String() + "</body></html>"
	}
	sel, err := extractor.CompileSelectors(extractor.SelectSpec{Item: "div.i", Title: "h3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		src   func(count int) string
		sel   bool
		count func(*extractor.Result) int
		diag  string
	}{
		{"items", func(c int) string { return annotated(c, item) }, false,
			func(r *extractor.Result) int { return len(r.Document.Items) }, "more than 3 items"},
		{"selected items", selected, true,
			func(r *extractor.Result) int { return len(r.Document.Items) }, "3"},
		{"extensions", func(c int) string { return annotated(c, ext) }, false,
			func(r *extractor.Result) int { return len(r.Document.Channel.Extensions) }, "more than 3 extensions"},
		{"depth", nested, false,
			func(r *extractor.Result) int { return len(r.Document.Channel.Extensions) }, "nested deeper than 3"},
		{"diagnostics", func(c int) string { return annotated(c, stray) }, false,
			func(r *extractor.Result) int { return len(r.Diagnostics) }, "more diagnostics not reported (limit 3)"},
	} {
		for _, count := range []int{n, n + 1, n + 2} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, count), func(t *testing.T) {
				opts := extractor.Options{URL: page, Limits: lim}
				var res *extractor.Result
				var err error
				if tc.sel {
					res, err = sel.Extract(strings.NewReader(tc.src(count)), opts)
				} else {
					res, err = extractor.Extract(strings.NewReader(tc.src(count)), opts)
				}
				if err != nil {
					t.Fatalf("Extract: %v", err)
				}
				diags := strings.Join(diagStrings(res.Diagnostics), "\n")
				got := tc.count(res)
				reported := strings.Contains(diags, tc.diag)
				if tc.name == "diagnostics" {
					// n warnings: n reported; n+1: n, then the note of the one left out.
					want := n
					if count > n {
						want = n + 1
					}
					if reported && !strings.Contains(diags, fmt.Sprintf("%d more diagnostics", count-n)) {
						t.Errorf("the note miscounts what was left out (%d):\n%s", count-n, diags)
					}
					if got != want || reported != (count > n) {
						t.Errorf("%d diagnostics (note %v), want %d:\n%s", got, reported, want, diags)
					}
					return
				}
				if got != n {
					t.Errorf("%d kept, want %d", got, n)
				}
				if reported != (count > n) && !tc.sel {
					t.Errorf("limit reported %v, want %v:\n%s", reported, count > n, diags)
				}
				if once := tc.name == "items" || tc.name == "extensions"; once && strings.Count(diags, tc.diag) > 1 {
					t.Errorf("limit reported more than once:\n%s", diags)
				}
				if tc.sel && (diags != "") != (count > n) {
					t.Errorf("diagnostics %q with %d items", diags, count)
				}
			})
		}
	}
}
