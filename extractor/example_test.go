package extractor_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
)

func ExampleExtract() {
	page := `<html><body>
<h1><!-- <channel:title> -->Our News<!-- </channel:title> --></h1>
<h2><!-- <item:title index="1"> -->Budget approved<!-- </item:title> --></h2>
<!-- <item:link index="1"> --><a href="/news/1.html">more</a><!-- </item:link> -->
<p><!-- <item:description index="1"> -->The council <b>approved</b> it.<!-- </item:description> --></p>
<!-- <item:title index="2"> -->Unclosed
</body></html>`
	res, err := extractor.Extract(strings.NewReader(page), extractor.Options{
		URL:       "https://example.org/news.html",
		RSSID:     "news",
		Timestamp: time.Date(2026, 11, 21, 10, 35, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	doc := res.Document
	fmt.Println(doc.Channel.Title, doc.Channel.Link)
	for _, it := range doc.Items {
		fmt.Printf("%d %s | %s | %q\n", it.Index, it.Title, it.Link, it.Description)
	}
	html, _ := doc.Items[0].Extensions.ContentEncoded()
	fmt.Println(html)
	for _, d := range res.Diagnostics {
		fmt.Println(d)
	}
	// Output:
	// Our News https://example.org/news.html
	// 1 Budget approved | https://example.org/news/1.html | "The council approved it."
	// 2 Unclosed | https://example.org/news.html | ""
	// The council <b>approved</b> it.
	// 6:1: error: unclosed <item:title index="2"> opened at 6:1: expected </item:title>; it is closed at the end of the page
}
