package schema_test

import (
	"bytes"
	"encoding/xml"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// nasty holds every character the escaping treats specially: markup, quotes,
// the three whitespace controls, other C0 controls, DEL, C1 controls, invalid
// and truncated UTF-8, an encoded surrogate, the two non-characters XML
// excludes, a literal U+FFFD, a rune past the BMP and line separators.
const nasty = "a\"b'c<d>e&f\tg\nh\ri\x00j\x01k\x1fl\x7fm\u0085n\x80o\xffp\xe2\x82q\xed\xa0\x80r\uFFFEs\uFFFFt\uFFFDu𝄞v\u2028w]]>x&amp;y"

func TestMarshalMatchesReference(t *testing.T) {
	withChannel := func(mutate func(*schema.Document)) *schema.Document {
		d := sampleDoc()
		mutate(d)
		return d
	}
	tests := []struct {
		name string
		doc  *schema.Document
	}{
		{"sample", sampleDoc()},
		{"realistic", benchDoc()},
		{"zero document", &schema.Document{}},
		{"zero timestamp, no items", withChannel(func(d *schema.Document) { d.Timestamp = time.Time{}; d.Items = nil })},
		{"empty items slice", withChannel(func(d *schema.Document) { d.Items = []schema.Item{} })},
		{"nanoseconds in another zone", withChannel(func(d *schema.Document) {
			d.Timestamp = time.Date(2026, 3, 29, 2, 30, 0, 123456780, time.FixedZone("x", 5*3600+1800))
		})},
		{"local time with monotonic clock", withChannel(func(d *schema.Document) { d.Timestamp = time.Now() })},
		{"year 0", withChannel(func(d *schema.Document) { d.Timestamp = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC) })},
		{"year 9999", withChannel(func(d *schema.Document) { d.Timestamp = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) })},
		{"XMLName set", withChannel(func(d *schema.Document) { d.XMLName = xml.Name{Space: "urn:x", Local: "other"} })},
		{"nasty text everywhere", withChannel(func(d *schema.Document) {
			d.URL, d.RSSID = nasty, nasty
			d.Channel = schema.Channel{Title: nasty, Link: nasty, Description: nasty,
				Image:      &schema.Image{Title: nasty, Link: nasty, URL: nasty},
				Extensions: schema.Extensions{{URI: nasty, Prefix: "p", LocalName: "l", Value: nasty}}}
			d.Items[0].ID, d.Items[0].Title, d.Items[0].Link, d.Items[0].Description = nasty, nasty, nasty, nasty
			d.Items[1].Image = &schema.Image{Title: nasty, Link: nasty, URL: nasty}
		})},
		{"empty image and empty extensions", withChannel(func(d *schema.Document) {
			d.Channel.Image = &schema.Image{}
			d.Channel.Extensions = schema.Extensions{}
			d.Items[0].Extensions = schema.Extensions{{}}
		})},
		{"extension names as given", withChannel(func(d *schema.Document) {
			d.Channel.Extensions = schema.Extensions{
				{URI: "", Prefix: "", LocalName: "x", Value: ""},
				{URI: "u", Prefix: "a b", LocalName: "<&>", Value: "v"},
				{URI: "u", Prefix: "p\"q", LocalName: "1x", Value: "\n"},
				{URI: "http://www.w3.org/XML/1998/namespace", Prefix: "xml", LocalName: "lang", Value: "en"},
			}
		})},
		{"extreme indexes", withChannel(func(d *schema.Document) {
			d.Items[0].Index, d.Items[1].Index = math.MinInt64, math.MaxInt64
			d.Items = append(d.Items, schema.Item{Index: 0}, schema.Item{Index: -1, ID: " "})
		})},
		{"whitespace only", withChannel(func(d *schema.Document) {
			d.Channel.Title, d.Channel.Description = " \t\r\n ", "\r\n"
			d.Items[1].Description = "\n\n"
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := schema.MarshalReference(tt.doc)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			got, err := schema.Marshal(tt.doc)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Marshal differs from encoding/xml at byte %d:\n got %q\nwant %q", firstDiff(got, want), got, want)
			}
			appended, err := schema.AppendMarshal([]byte("before"), tt.doc)
			if err != nil || string(appended) != "before"+string(want) {
				t.Errorf("AppendMarshal = %q, %v; want the prefix and then Marshal's bytes", appended, err)
			}
		})
	}
}

func TestMarshalTimestampOutOfRange(t *testing.T) {
	for _, ts := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("behind", -3600)), // year 10000 in UTC
	} {
		d := sampleDoc()
		d.Timestamp = ts
		_, wantErr := schema.MarshalReference(d)
		out, err := schema.Marshal(d)
		if err == nil || wantErr == nil || err.Error() != wantErr.Error() {
			t.Errorf("Marshal(%v) = %q, %v; reference error %v", ts, out, err, wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "marshal xmldata: ") {
			t.Errorf("error %q lacks the marshal xmldata prefix", err)
		}
		if b, err := schema.AppendMarshal([]byte("kept"), d); err == nil || string(b) != "kept" {
			t.Errorf("AppendMarshal = %q, %v; want an error and the buffer as it was", b, err)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzMarshal builds documents from fuzzed strings and holds Marshal to
// encoding/xml byte for byte; Validate must report everything the slower
// reference Validate reported, and a document that validates must survive a
// round trip through Unmarshal.
func FuzzMarshal(f *testing.F) {
	f.Add("https://example.org/", "news", "Title & <b>", "https://example.org/1", "desc\r\n", "dc", "date", schema.DCNamespace, "2005-12-08T08:25:00Z", 1, int64(1764000000), int64(5), 3600, uint8(0))
	f.Add(nasty, nasty, nasty, nasty, nasty, "p", "l", nasty, nasty, -3, int64(-62135596800), int64(0), 0, uint8(0xff))
	f.Add("", "", "", "", "", "", "", "", "", 0, int64(0), int64(0), 0, uint8(0x55))
	f.Add("urn:x", "r", "\uFFFE", "\xff", "\t", "xml", "lang", "http://www.w3.org/XML/1998/namespace", "en", 2, int64(253402300799), int64(999999999), -60, uint8(0xaa))
	f.Add("https://a.b:8080/x?y#z", "r", "", "example.org:1/p?q=%41#f", "", "a", "b", "u", "v", 1, int64(0), int64(0), 0, uint8(0x7))
	f.Add("http://[::1]:80/", "r", "t", "x.y/a b", "", "a", "b", "u", "v", 1, int64(0), int64(0), 0, uint8(0x7))
	f.Fuzz(func(t *testing.T, url, id, title, link, text, prefix, local, uri, value string, index int, sec, nsec int64, offset int, flags uint8) {
		ext := schema.Extensions{{URI: uri, Prefix: prefix, LocalName: local, Value: value}}
		if flags&1 != 0 {
			ext = append(ext, schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: text})
		}
		doc := &schema.Document{
			URL: url, RSSID: id,
			Timestamp: time.Unix(sec, nsec).In(time.FixedZone("z", offset%(18*3600))),
			Channel:   schema.Channel{Title: title, Link: link, Description: text},
		}
		if flags&2 != 0 {
			doc.Channel.Image = &schema.Image{Title: text, Link: link, URL: url}
		}
		if flags&4 != 0 {
			doc.Channel.Extensions = ext
		}
		for i := range int(flags>>3) % 4 {
			it := schema.Item{Index: index + i, ID: id + strings.Repeat("+", i), Title: text, Link: link, Description: title}
			if flags&(16<<i) != 0 {
				it.Extensions = ext
				it.Image = &schema.Image{Title: title, Link: url, URL: link}
			}
			doc.Items = append(doc.Items, it)
		}

		want, wantErr := schema.MarshalReference(doc)
		got, err := schema.Marshal(doc)
		if wantErr != nil {
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("reference failed with %v, Marshal returned %v", wantErr, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Marshal: %v (reference succeeded)", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Marshal differs from encoding/xml at byte %d:\n got %q\nwant %q", firstDiff(got, want), got, want)
		}
		for _, s := range []string{url, id, title, link, text, prefix, local, uri, value} {
			if schema.LegalXML(s) != schema.LegalXMLReference(s) {
				t.Fatalf("LegalXML(%q) = %v, reference %v", s, schema.LegalXML(s), schema.LegalXMLReference(s))
			}
		}
		for _, s := range []string{url, link, "https://" + link, "http://" + title, "https://" + prefix + ":" + local + "/" + value} {
			if schema.PlainURL(s) && (!schema.AbsoluteURL(s) || !schema.IsURI(s)) {
				t.Fatalf("PlainURL(%q) holds but url.Parse says absolute %v, URI %v", s, schema.AbsoluteURL(s), schema.IsURI(s))
			}
		}
		valid := doc.Validate()
		if missing := missingProblems(valid, schema.ValidateReference(doc)); missing != "" {
			t.Fatalf("Validate = %v\nmisses what the reference found: %s", valid, missing)
		}
		if valid != nil {
			return
		}
		back, err := schema.Unmarshal(got)
		if err != nil {
			t.Fatalf("Unmarshal of a valid document's XML: %v\n%s", err, got)
		}
		if norm := normalized(doc); !reflect.DeepEqual(back, norm) {
			t.Fatalf("round trip changed a valid document:\n got %+v\nwant %+v\n%s", back, norm, got)
		}
	})
}

// missingProblems returns the lines of want that got lacks.
func missingProblems(got, want error) string {
	if want == nil {
		return ""
	}
	have := map[string]bool{}
	if got != nil {
		for _, line := range strings.Split(got.Error(), "\n") {
			have[line] = true
		}
	}
	var missing []string
	for _, line := range strings.Split(want.Error(), "\n") {
		if !have[line] {
			missing = append(missing, line)
		}
	}
	return strings.Join(missing, "; ")
}

// normalized is doc as Unmarshal returns it: time in UTC, empty slices nil.
func normalized(doc *schema.Document) *schema.Document {
	d := *doc
	d.XMLName = xml.Name{}
	d.Timestamp = d.Timestamp.UTC()
	if len(d.Channel.Extensions) == 0 {
		d.Channel.Extensions = nil
	}
	if len(d.Items) == 0 {
		d.Items = nil
	}
	d.Items = append([]schema.Item(nil), d.Items...)
	for i := range d.Items {
		if len(d.Items[i].Extensions) == 0 {
			d.Items[i].Extensions = nil
		}
	}
	return &d
}
