package schema_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

var benchWords = strings.Fields(`council budget road works concert jazz park school library election
	mayor river bridge festival market station museum theatre football hospital weather storm
	garden tram bicycle harbour airport cinema bakery university science history music art
	café straße naïve résumé — “quoted” & <tagged> 'single' "double"`)

// benchDoc is a realistic stored version: a page of 20 items, each with a
// title, a link, a 30-word description, a content:encoded copy of it as HTML
// and a dc:date, about 21 KB of XML.
func benchDoc() *schema.Document {
	rng := rand.New(rand.NewPCG(1, 2))
	sentence := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchWords[rng.IntN(len(benchWords))])
		}
		return b.String()
	}
	ts := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	d := &schema.Document{
		URL: "https://news.example.org/city/", RSSID: "city", Timestamp: ts,
		Channel: schema.Channel{
			Title: "News of the city", Link: "https://news.example.org/city/", Description: "Local news",
			Image: &schema.Image{Title: "City", Link: "https://news.example.org/city/", URL: "https://news.example.org/logo.png"},
		},
	}
	for i := range 20 {
		desc := sentence(30)
		d.Items = append(d.Items, schema.Item{
			Index:       i + 1,
			ID:          "city-" + strconv.Itoa(1000+i),
			Title:       sentence(8),
			Link:        "https://news.example.org/city/articles/" + strconv.Itoa(1000+i) + ".html",
			Description: desc,
			Extensions: schema.Extensions{
				{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>" + desc + "</p>\n<p>" + sentence(20) + "</p>"},
				{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: ts.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339)},
			},
		})
	}
	return d
}

var appendBuf []byte

func BenchmarkMarshal(b *testing.B) {
	doc := benchDoc()
	for _, bm := range []struct {
		name    string
		marshal func(*schema.Document) ([]byte, error)
	}{
		{"fast", schema.Marshal},
		{"reference", schema.MarshalReference},
		{"append", func(d *schema.Document) ([]byte, error) { // reusing one buffer
			var err error
			appendBuf, err = schema.AppendMarshal(appendBuf[:0], d)
			return appendBuf, err
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			out, err := bm.marshal(doc)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bm.marshal(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	doc := benchDoc()
	for _, bm := range []struct {
		name     string
		validate func(*schema.Document) error
	}{
		{"fast", (*schema.Document).Validate},
		{"reference", schema.ValidateReference},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bm.validate(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
