package extractor_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor"
)

// legacyPage generates, deterministically, a ~1 MB table-layout news page
// with n annotated items: title, link, description with markup, date.
func legacyPage(n int) []byte {
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
<!-- <item:description index="%d"> -->The council met on <i>Tuesday</i> and approved the <a href="/budget/%d">budget</a> for next year,
after a long debate about roads, schools&nbsp;and the library, which the mayor called "overdue". <img src="/img/p%d.jpg" alt="photo"> More at eleven.<!-- </item:description> -->
</font></td><td width="120"><a href="/ads/%d"><img src="/ads/%d.gif" width="120" height="60" border="0"></a></td></tr>
`, i, i, i, i%28+1, i%12+1, i%60, i, i, i, i, i, i, i)
	}
	b.WriteString("</table></body></html>\n")
	return b.Bytes()
}

func BenchmarkExtract(b *testing.B) {
	data := legacyPage(1000)
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
