package api

// The one place where the api reads extractor's suggest: the pages turn
// what it proposes into pageOffer, so a change of its Go API is a change of
// this file only.

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/goccy/go-yaml"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// maxProposals is how many select blocks /new shows: the best and three
// alternatives.
const maxProposals = 4

// pageOffer is what a page offers besides its annotations: its own feeds
// and the select blocks proposed for it, best first.
type pageOffer struct {
	Feeds     []pageFeed
	Proposals []proposal
}

// pageFeed is a feed the page links to with <link rel="alternate">.
type pageFeed struct {
	Title string
	Type  string
	URL   string // absolute
}

// proposal is one select block proposed for a page.
type proposal struct {
	Block  string // the block as YAML (the mapping under select:), ready to edit
	Reason string // why it was proposed, for people
}

// suggestOffer reads what page offers. A page without repeated structure
// has no proposals, and no error.
func suggestOffer(page Page) (pageOffer, error) {
	offer := pageOffer{Feeds: pageFeeds(page.Body, page.URL)}
	sugs, err := extractor.Suggest(bytes.NewReader(page.Body), extractor.Options{URL: page.URL, ContentType: page.ContentType})
	if err != nil {
		return offer, fmt.Errorf("suggest: %w", err)
	}
	for _, sg := range sugs {
		if len(offer.Proposals) == maxProposals {
			break
		}
		block, err := yaml.Marshal(sg.Spec)
		if err != nil {
			return offer, fmt.Errorf("write proposed block: %w", err)
		}
		offer.Proposals = append(offer.Proposals, proposal{
			Block:  string(block),
			Reason: fmt.Sprintf("%d repeated elements; %s", sg.Items, sg.Why),
		})
	}
	return offer, nil
}

// feedTypes are the media types of <link rel="alternate"> that are feeds.
var feedTypes = map[string]bool{
	"application/rss+xml": true, "application/atom+xml": true, "application/feed+json": true,
	"application/json": false, "application/rdf+xml": true, "application/xml": false, "text/xml": false,
}

// pageFeeds lists the feeds a page names in its <head> (<link
// rel="alternate" type="application/rss+xml" href>), relative URLs made
// absolute against the page's URL (or its <base href>).
func pageFeeds(body []byte, pageURL string) []pageFeed {
	base, _ := url.Parse(pageURL) // nil: hrefs stay as written
	var out []pageFeed
	seen := map[string]bool{}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if tok.DataAtom == atom.Body {
			return out // feeds are announced in the head
		}
		attr := func(name string) string {
			for _, a := range tok.Attr {
				if a.Key == name {
					return strings.TrimSpace(a.Val)
				}
			}
			return ""
		}
		if tok.DataAtom == atom.Base && base != nil {
			if b, err := base.Parse(attr("href")); err == nil {
				base = b
			}
			continue
		}
		if tok.DataAtom != atom.Link || !hasToken(attr("rel"), "alternate") {
			continue
		}
		typ := strings.ToLower(attr("type"))
		if t, _, _ := strings.Cut(typ, ";"); !feedTypes[strings.TrimSpace(t)] {
			continue
		}
		href := attr("href")
		if href == "" {
			continue
		}
		if base != nil {
			u, err := base.Parse(href)
			if err != nil {
				continue
			}
			href = u.String()
		}
		if u, err := url.Parse(href); err != nil || (u.Scheme != "http" && u.Scheme != "https") || seen[href] {
			continue
		}
		seen[href] = true
		out = append(out, pageFeed{Title: attr("title"), Type: typ, URL: href})
	}
}

// hasToken reports whether a space-separated list (rel="alternate feed")
// holds tok, case-insensitively.
func hasToken(list, tok string) bool {
	for f := range strings.FieldsSeq(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}
