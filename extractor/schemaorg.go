package extractor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor/xpathcall"
)

// SchemaOrg is the value of [SelectSpec.From] that takes a page's items
// from its schema.org data (JSON-LD or microdata) instead of selectors.
const SchemaOrg = "schema.org"

// compileFrom checks a block with From: the only source is [SchemaOrg],
// and the item selectors have nothing to apply to (channel selectors do).
func (s *Selectors) compileFrom(spec SelectSpec) []error {
	var errs []error
	if f := strings.TrimSpace(spec.From); f != SchemaOrg {
		errs = append(errs, &SelectorError{Field: "from", Selector: spec.From,
			Err: fmt.Errorf("unknown source: want %q (or no from, and an item selector)", SchemaOrg)})
	}
	s.from = SchemaOrg
	set := []struct{ name, v string }{{"item", spec.Item}, {"title", spec.Title}, {"link", spec.Link},
		{"description", spec.Description}, {"date", spec.Date}, {"image", spec.Image}, {"id", spec.ID}}
	for _, f := range set {
		if f.v != "" {
			errs = append(errs, &SelectorError{Field: f.name, Selector: f.v,
				Err: fmt.Errorf("not used with from: %s, which takes the items and their fields from the page's structured data; remove it, or remove from", SchemaOrg)})
		}
	}
	return errs
}

// schemaItem is one schema.org item as matches, for the value back end:
// strings from JSON-LD or attributes, elements from microdata.
type schemaItem struct {
	title, link, description, date, image match
}

// schemaOrgItems is the schema.org front end: it fills b.items from the
// page's JSON-LD (ItemList elements, else the items of the article, event,
// job... types, @graph and top-level arrays included) or, when that has
// fewer items, its microdata, with the same field setters as the selector
// front end (so the same value rules and the same back end).
func (b *builder) schemaOrgItems(doc *html.Node) error {
	ld, bad := jsonLDItems(doc)
	for _, msg := range bad {
		b.warn(selAt, msg)
	}
	items := ld
	if md := microdataItems(doc); len(md) > len(items) {
		items = md
	}
	if len(items) == 0 {
		b.diags.max++ // always room for the reason there is no document
		b.fail(selAt, "select.from schema.org: the page has no schema.org items (JSON-LD or microdata Article, BlogPosting, Event, JobPosting, ItemList…): no document")
		return fmt.Errorf("%w: the page has no schema.org items", ErrNoItems)
	}
	for i, si := range items {
		index := i + 1
		if index > b.limits.MaxItems {
			b.fail(selAt, fmt.Sprintf("the page has %d schema.org items, more than %d: the rest are ignored", len(items), b.limits.MaxItems))
			break
		}
		it := &itemSpec{index: index, at: selAt}
		b.items[index] = it
		f := &it.fields
		if si.title.found() {
			b.textField(&f.title, si.title)
		}
		if si.description.found() {
			b.descriptionField(&f.description, si.description)
		}
		if si.link.found() {
			b.urlField(&f.link, si.link)
		}
		if si.date.found() {
			v := value{limit: b.limits.MaxValueBytes}
			b.text(&v, si.date)
			if d := v.String(); d != "" {
				f.exts = append(f.exts, extSpec{uri: dcNamespace, prefix: "dc", local: "date", val: d, at: selAt})
			}
		}
		if si.image.found() {
			f.image = b.imageOf(si.image)
		}
	}
	return nil
}

// schemaType is a type name without its vocabulary: "NewsArticle" for
// "NewsArticle", "schema:NewsArticle" or "https://schema.org/NewsArticle".
func schemaType(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/#:"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// itemTypes are the schema.org types whose things are a feed's items;
// types ending in Article, Posting or Event are too.
var itemTypes = map[string]bool{
	"CreativeWork": true, "Recipe": true, "Product": true, "VideoObject": true, "PodcastEpisode": true,
	"Episode": true, "Course": true, "Review": true, "Book": true, "Movie": true, "Dataset": true,
	"Question": true, "Report": true, "Clip": true, "AudioObject": true, "MusicRecording": true,
	"SoftwareApplication": true, "Offer": true, "Legislation": true, "Guide": true, "HowTo": true,
}

func isItemType(types []string) bool {
	for _, t := range types {
		if itemTypes[t] || strings.HasSuffix(t, "Article") || strings.HasSuffix(t, "Posting") || strings.HasSuffix(t, "Event") {
			return true
		}
	}
	return false
}

func hasType(types []string, want string) bool {
	for _, t := range types {
		if t == want {
			return true
		}
	}
	return false
}

// maxLDDepth bounds the walk of a JSON-LD value.
const maxLDDepth = 64

// jsonLDItems returns the items of the page's JSON-LD blocks: the
// elements of its ItemLists when they are at least as many as the things
// of item types found elsewhere, else those things; and a warning for each
// block that is not JSON.
func jsonLDItems(doc *html.Node) (items []schemaItem, bad []string) {
	var c ldCollector
	k := 0
	walkAll(doc, func(n *html.Node) {
		if n.DataAtom != atom.Script || !strings.EqualFold(strings.TrimSpace(strings.Split(attrMatch(n, "type").s, ";")[0]), "application/ld+json") {
			return
		}
		k++
		var text strings.Builder
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type == html.TextNode {
				text.WriteString(ch.Data)
			}
		}
		src := strings.TrimSpace(text.String())
		for _, w := range []string{"<!--", "//<![CDATA[", "<![CDATA["} {
			src = strings.TrimPrefix(src, w)
		}
		for _, w := range []string{"-->", "//]]>", "]]>"} {
			src = strings.TrimSuffix(strings.TrimSpace(src), w)
		}
		var v any
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			bad = append(bad, fmt.Sprintf("JSON-LD block %d is not JSON (%v): ignored", k, ldError(err)))
			return
		}
		c.visit(v, 0)
	})
	list := dedupItems(c.list)
	things := dedupItems(c.things)
	if len(list) >= len(things) && len(list) > 0 {
		return list, bad
	}
	return things, bad
}

// ldError shortens a JSON error for a diagnostic.
func ldError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	return err.Error()
}

// ldCollector gathers JSON-LD items while walking the values.
type ldCollector struct {
	list   []schemaItem // elements of ItemLists
	things []schemaItem // things of item types, outside lists
}

func (c *ldCollector) visit(v any, depth int) {
	if depth > maxLDDepth {
		return
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			c.visit(e, depth+1)
		}
	case map[string]any:
		types := ldTypes(v["@type"])
		switch {
		case hasType(types, "ItemList") || hasType(types, "HowToSection"):
			for _, e := range asList(v["itemListElement"]) {
				if si, ok := ldListElement(e); ok {
					c.list = append(c.list, si)
				}
			}
			return
		case hasType(types, "BreadcrumbList"):
			return
		case isItemType(types):
			c.things = append(c.things, ldThing(v))
			return // a thing's parts (publisher, author, isPartOf) are not items
		}
		for k, e := range v {
			if k != "@context" {
				c.visit(e, depth+1)
			}
		}
	}
}

// ldListElement reads an element of itemListElement: a ListItem with an
// item (a thing, or its URL) or a url, a thing itself, or a URL.
func ldListElement(e any) (schemaItem, bool) {
	switch e := e.(type) {
	case string:
		return schemaItem{link: strMatch(e)}, strings.TrimSpace(e) != ""
	case map[string]any:
		if !hasType(ldTypes(e["@type"]), "ListItem") {
			return ldThing(e), true
		}
		var si schemaItem
		switch it := e["item"].(type) {
		case map[string]any:
			si = ldThing(it)
		case string:
			si.link = strMatch(it)
		}
		own := ldThing(e)
		si.fillFrom(own)
		return si, si.title.found() || si.link.found()
	}
	return schemaItem{}, false
}

// ldThing reads the fields of a JSON-LD thing.
func ldThing(m map[string]any) schemaItem {
	var si schemaItem
	si.title = ldText(m, "headline", "name", "alternativeHeadline", "title")
	si.link = ldURL(m, "url", "mainEntityOfPage", "@id")
	si.date = ldText(m, "datePublished", "startDate", "datePosted", "dateCreated", "uploadDate", "dateModified")
	si.description = ldDescription(m)
	si.image = ldURL(m, "image", "thumbnailUrl", "thumbnail")
	return si
}

// ldTypes reads @type: a string or a list of strings.
func ldTypes(v any) []string {
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, schemaType(s))
		}
	}
	return out
}

// asList is v as a list: itself when it is one, else a list of v (nil
// for nil).
func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// ldString is a JSON-LD value as text: a string, a number, the first of a
// list, or an {"@value": ...} object.
func ldString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, strings.TrimSpace(v) != ""
	case float64:
		return xpathcall.Number(v), true
	case []any:
		for _, e := range v {
			if s, ok := ldString(e); ok {
				return s, true
			}
		}
	case map[string]any:
		if s, ok := v["@value"]; ok {
			return ldString(s)
		}
	}
	return "", false
}

// ldText is the first of keys that holds text, with HTML entities (which
// some pages write into their JSON-LD) decoded.
func ldText(m map[string]any, keys ...string) match {
	for _, k := range keys {
		if s, ok := ldString(m[k]); ok {
			return strMatch(html.UnescapeString(s))
		}
	}
	return match{}
}

// ldURL is the first of keys that holds a URL: a string, an object's url,
// contentUrl or @id (an ImageObject, a WebPage), or the first of a list.
func ldURL(m map[string]any, keys ...string) match {
	for _, k := range keys {
		if s, ok := ldURLValue(m[k], 0); ok {
			if k == "@id" && !isWebURL(s) {
				continue // a blank node's name, not a page
			}
			return strMatch(s)
		}
	}
	return match{}
}

func ldURLValue(v any, depth int) (string, bool) {
	if depth > 4 {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v), strings.TrimSpace(v) != ""
	case []any:
		for _, e := range v {
			if s, ok := ldURLValue(e, depth+1); ok {
				return s, true
			}
		}
	case map[string]any:
		for _, k := range []string{"url", "contentUrl", "@id"} {
			if s, ok := ldURLValue(v[k], depth+1); ok && (k != "@id" || isWebURL(s)) {
				return s, true
			}
		}
	}
	return "", false
}

// isWebURL reports whether s is an absolute http(s) URL.
func isWebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ldDescription is a thing's description; one with markup becomes an
// element, so the back end keeps its sanitized HTML as for selectors.
func ldDescription(m map[string]any) match {
	t := ldText(m, "description", "abstract")
	if !t.found() || !strings.Contains(t.s, "<") {
		return t
	}
	body := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(t.s), body)
	if err != nil {
		return t
	}
	for _, n := range nodes {
		body.AppendChild(n)
	}
	return match{n: body}
}

func strMatch(s string) match { return match{s: s, str: true} }

// dedupItems drops an item whose link an earlier item has.
func dedupItems(items []schemaItem) []schemaItem {
	seen := map[string]bool{}
	out := items[:0:0]
	for _, si := range items {
		if si.link.str && si.link.s != "" {
			if seen[si.link.s] {
				continue
			}
			seen[si.link.s] = true
		}
		out = append(out, si)
	}
	return out
}

// microdataItems returns the page's microdata items: the elements of its
// ItemLists when they are at least as many as the scopes of item types
// found elsewhere, else those scopes; in page order.
func microdataItems(doc *html.Node) []schemaItem {
	var list, things []schemaItem
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > maxTreeDepth {
			return
		}
		if n.Type == html.ElementNode && attrMatch(n, "itemscope").found() {
			types := mdTypes(n)
			switch {
			case hasType(types, "ItemList"):
				for _, e := range mdProps(n, "itemListElement") {
					if si, ok := mdListElement(e); ok {
						list = append(list, si)
					}
				}
				return
			case hasType(types, "BreadcrumbList"):
				return
			case isItemType(types):
				things = append(things, mdThing(n))
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	list, things = dedupItems(list), dedupItems(things)
	if len(list) >= len(things) && len(list) > 0 {
		return list
	}
	return things
}

// mdTypes are an itemscope's itemtype names.
func mdTypes(n *html.Node) []string {
	var out []string
	for _, t := range strings.Fields(attrMatch(n, "itemtype").s) {
		out = append(out, schemaType(t))
	}
	return out
}

// mdProps returns the elements that give the property name of the scope:
// those whose itemprop names it and whose nearest itemscope ancestor is
// the scope, in page order.
func mdProps(scope *html.Node, name string) []*html.Node {
	var out []*html.Node
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > maxTreeDepth {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			for _, p := range strings.Fields(attrMatch(c, "itemprop").s) {
				if p == name {
					out = append(out, c)
					break
				}
			}
			if !attrMatch(c, "itemscope").found() {
				walk(c, depth+1)
			}
		}
	}
	walk(scope, 0)
	return out
}

// mdListElement reads an itemListElement: a ListItem scope with an item
// or url property, or another scope.
func mdListElement(e *html.Node) (schemaItem, bool) {
	if !attrMatch(e, "itemscope").found() {
		v := mdValue(e)
		return schemaItem{link: v, title: match{n: e}}, v.found()
	}
	if !hasType(mdTypes(e), "ListItem") {
		return mdThing(e), true
	}
	own := mdThing(e)
	si := own
	if items := mdProps(e, "item"); len(items) > 0 {
		if attrMatch(items[0], "itemscope").found() {
			si = mdThing(items[0])
		} else {
			si = schemaItem{link: mdValue(items[0])}
		}
		si.fillFrom(own)
	}
	return si, si.title.found() || si.link.found()
}

// mdThing reads the fields of a microdata scope.
func mdThing(scope *html.Node) schemaItem {
	first := func(names ...string) match {
		for _, name := range names {
			for _, e := range mdProps(scope, name) {
				if attrMatch(e, "itemscope").found() {
					if name == "image" || name == "mainEntityOfPage" {
						if v := mdThingURL(e); v.found() {
							return v
						}
					}
					continue
				}
				if v := mdValue(e); v.found() && (v.n != nil || strings.TrimSpace(v.s) != "") {
					return v
				}
			}
		}
		return match{}
	}
	si := schemaItem{
		title:       first("headline", "name", "alternativeHeadline"),
		link:        first("url", "mainEntityOfPage"),
		date:        first("datePublished", "startDate", "datePosted", "dateCreated", "uploadDate", "dateModified"),
		description: first("description", "abstract"),
		image:       first("image", "thumbnailUrl"),
	}
	if !si.link.found() {
		if id := attrMatch(scope, "itemid").s; isWebURL(id) {
			si.link = strMatch(id)
		}
	}
	return si
}

// mdThingURL is the url (or contentUrl) of a nested scope (an ImageObject).
func mdThingURL(scope *html.Node) match {
	for _, name := range []string{"url", "contentUrl"} {
		for _, e := range mdProps(scope, name) {
			if v := mdValue(e); v.found() {
				return v
			}
		}
	}
	return match{}
}

// mdValue is an element's property value by the microdata rules: an
// attribute for the elements that have one (content, href, src, data,
// value, datetime), else the element, whose text the back end reads.
func mdValue(e *html.Node) match {
	if c := attrMatch(e, "content"); c.found() {
		return c
	}
	switch e.DataAtom {
	case atom.A, atom.Area, atom.Link:
		return attrMatch(e, "href")
	case atom.Img, atom.Audio, atom.Embed, atom.Iframe, atom.Source, atom.Track, atom.Video:
		return attrMatch(e, "src")
	case atom.Object:
		return attrMatch(e, "data")
	case atom.Data, atom.Meter:
		return attrMatch(e, "value")
	case atom.Time:
		if d := attrMatch(e, "datetime"); d.found() {
			return d
		}
	}
	return match{n: e}
}

// walkAll calls f on every element of the tree, hidden ones included (a
// JSON-LD block is a <script>).
func walkAll(n *html.Node, f func(*html.Node)) {
	var walk func(*html.Node, int)
	walk = func(n *html.Node, depth int) {
		if depth > maxTreeDepth {
			return
		}
		if n.Type == html.ElementNode {
			f(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
}

// source names where the items come from, for messages: the item
// selector, quoted, or "from: schema.org".
func (s *Selectors) source() string {
	if s.from != "" {
		return "from: " + s.from
	}
	return fmt.Sprintf("%q", s.spec.Item)
}

// fillFrom gives si the fields it lacks from own (the item's own values
// beside those of the thing it wraps).
func (si *schemaItem) fillFrom(own schemaItem) {
	for _, f := range [...]struct{ dst, src *match }{{&si.title, &own.title}, {&si.link, &own.link}, {&si.description, &own.description}, {&si.date, &own.date}, {&si.image, &own.image}} {
		if !f.dst.found() {
			*f.dst = *f.src
		}
	}
}
