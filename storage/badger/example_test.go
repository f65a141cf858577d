package badger_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func Example() {
	dir, err := os.MkdirTemp("", "dynamo-example")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary directory: nothing to do on failure
	db, err := badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
	if err != nil {
		panic(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			fmt.Println(err)
		}
	}()

	ctx := context.Background()
	page := func(minute int, titles ...string) *schema.Document {
		d := &schema.Document{URL: "https://example.org/news.html", RSSID: "news",
			Timestamp: time.Date(2026, 3, 1, 12, minute, 0, 0, time.UTC),
			Channel:   schema.Channel{Title: "News", Link: "https://example.org/"}}
		for i, t := range titles {
			d.Items = append(d.Items, schema.Item{Index: i + 1, ID: t, Title: t, Link: "https://example.org/" + t})
		}
		return d
	}
	for _, d := range []*schema.Document{
		page(0, "budget", "roads"),
		page(5, "budget", "roads"), // same content: not stored
		page(9, "concert", "budget"),
	} {
		res, err := db.Save(ctx, d)
		if err != nil {
			panic(err)
		}
		fmt.Printf("changed=%v seq=%d\n", res.Changed, res.Seq)
	}
	items, err := db.Items(ctx, "news", storage.ItemQuery{Max: 10})
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		fmt.Printf("%s first seen %s, last in version %d\n", it.Title, it.FirstSeen.Format("15:04"), it.Seq)
	}
	// Output:
	// changed=true seq=1
	// changed=false seq=1
	// changed=true seq=2
	// concert first seen 12:09, last in version 2
	// budget first seen 12:00, last in version 2
	// roads first seen 12:00, last in version 1
}
