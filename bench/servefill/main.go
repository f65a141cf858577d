// Command servefill pre-fills a dynamo store for bench/serve.sh: a resource
// whose feed of the 20 newest items is about 20 KB of RSS 2.0, and a resource
// with 100,000 distinct items for uncached keyword queries.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func main() {
	dir := flag.String("dir", "", "store directory (created)")
	versions := flag.Int("versions", 50, "versions of the feed resource")
	bigItems := flag.Int("big-items", 100_000, "distinct items of the keyword resource")
	perVersion := flag.Int("per-version", 500, "items per version of the keyword resource")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: servefill -dir DIR")
		os.Exit(2)
	}
	if err := fill(context.Background(), *dir, *versions, *bigItems, *perVersion); err != nil {
		fmt.Fprintf(os.Stderr, "servefill: %v\n", err)
		os.Exit(1)
	}
}

// filler is the text of item descriptions: long enough that 20 items make
// about 20 KB of RSS.
var filler = strings.Repeat("The council met on Tuesday evening to discuss the harbour budget, the summer festival and the tram extension. ", 6)

func fill(ctx context.Context, dir string, versions, bigItems, perVersion int) error {
	db, err := badger.Open(dir, badger.Options{NoSyncWrites: true})
	if err != nil {
		return err
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// "bench": each version shows the 40 newest articles; two are new each time.
	for v := range versions {
		doc := &schema.Document{URL: "https://example.org/news.html", RSSID: "bench", Timestamp: t0.Add(time.Duration(v) * time.Hour),
			Channel: schema.Channel{Title: "Bench News", Link: "https://example.org/", Description: "A page for the serving benchmark"}}
		newest := 2*v + 40
		for i := range 40 {
			n := newest - i
			doc.Items = append(doc.Items, schema.Item{Index: i + 1, ID: fmt.Sprintf("a%06d", n),
				Title: fmt.Sprintf("Article %d: the council decides", n), Link: fmt.Sprintf("https://example.org/news/%d.html", n),
				Description: fmt.Sprintf("Article %d. %s", n, filler)})
		}
		if _, err := db.Save(ctx, doc); err != nil {
			return fmt.Errorf("save bench v%d: %w", v, err)
		}
	}
	// "big": every version brings perVersion new items, Item 00000 … Item 99999.
	for v := 0; v*perVersion < bigItems; v++ {
		doc := &schema.Document{URL: "https://example.org/archive.html", RSSID: "big", Timestamp: t0.Add(time.Duration(v) * time.Minute),
			Channel: schema.Channel{Title: "Big Archive", Link: "https://example.org/archive.html"}}
		for i := range perVersion {
			n := v*perVersion + i
			if n >= bigItems {
				break
			}
			doc.Items = append(doc.Items, schema.Item{Index: i + 1, ID: fmt.Sprintf("b%06d", n),
				Title: fmt.Sprintf("Item %05d of the archive", n), Link: fmt.Sprintf("https://example.org/archive/%d.html", n),
				Description: "An archived notice about the harbour."})
		}
		if _, err := db.Save(ctx, doc); err != nil {
			return fmt.Errorf("save big v%d: %w", v, err)
		}
	}
	return db.Close()
}
