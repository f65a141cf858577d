package ui

// The one place where the pages read package suggest: the pages turn
// what it proposes into pageOffer, so a change of its Go API is a change of
// this file only.

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
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
	Reason string // why it was proposed, for people (it states Count and Where)
	Count  int    // the items the block yields, as the reason says
	Where  string // where the list sits on the page ("under “Latest news”", "in the sidebar"; may be empty)
}

// suggestOffer reads what page offers: its own feeds and suggest's
// proposals of select blocks (its schema.org items, its repeated
// structures), best first. Its annotations are shown apart, as the feed
// they make. A page without any has no proposals, and no error.
func suggestOffer(page api.Page) (pageOffer, error) {
	sugs, err := suggest.Page(page.Body, extractor.Options{URL: page.URL, ContentType: page.ContentType})
	if err != nil {
		return pageOffer{}, fmt.Errorf("suggest: %w", err)
	}
	var offer pageOffer
	for _, f := range sugs.Feeds {
		offer.Feeds = append(offer.Feeds, pageFeed{Title: f.Title, Type: f.Type, URL: f.URL})
	}
	for _, p := range sugs.Proposals {
		if p.Select == nil || len(offer.Proposals) == maxProposals {
			continue // the annotations: shown as the feed they make
		}
		block, err := yaml.Marshal(p.Select)
		if err != nil {
			return offer, fmt.Errorf("write proposed block: %w", err)
		}
		offer.Proposals = append(offer.Proposals, proposal{Block: string(block), Reason: p.Reason, Count: p.Count, Where: p.Where})
	}
	return offer, nil
}

// pageOptions are the options suggest reads page with.
func pageOptions(page api.Page) extractor.Options {
	return extractor.Options{URL: page.URL, ContentType: page.ContentType}
}

// writeBlock is a proposal's block as the forms carry it (YAML).
func writeBlock(p suggest.Proposal) (string, error) {
	if p.Select == nil {
		return "", errors.New("suggest proposed no select block")
	}
	b, err := yaml.Marshal(p.Select)
	if err != nil {
		return "", fmt.Errorf("write the block: %w", err)
	}
	return string(b), nil
}

// likeBlock is the list of the items like element n: its block, as spec
// and YAML, and where it sits ("under “Notices”").
func likeBlock(page api.Page, n int) (spec extractor.SelectSpec, block, where string, err error) {
	p, err := suggest.Like(page.Body, pageOptions(page), n)
	if err != nil {
		return spec, "", "", err
	}
	if block, err = writeBlock(p); err != nil {
		return spec, "", "", err
	}
	return *p.Select, block, p.Where, nil
}

// excludeBlock is spec with the item that holds element n, and its like,
// left out.
func excludeBlock(page api.Page, spec extractor.SelectSpec, n int) (string, error) {
	p, err := suggest.Exclude(page.Body, pageOptions(page), spec, n)
	if err != nil {
		return "", err
	}
	return writeBlock(p)
}

// fieldBlock is spec with field (title, date, link) read from element n
// and its like in the other items.
func fieldBlock(page api.Page, spec extractor.SelectSpec, field string, n int) (string, error) {
	p, err := suggest.Field(page.Body, pageOptions(page), spec, field, n)
	if err != nil {
		return "", err
	}
	return writeBlock(p)
}

// blockParts tells, for each element of page, which of spec's items it
// is part of (-1: none; nil when spec matches nothing, or is not valid).
func blockParts(page api.Page, spec extractor.SelectSpec) []int {
	parts, _ := suggest.ItemParts(page.Body, pageOptions(page), spec)
	return parts
}

// elementText is element n for people: its tag and the start of its text.
func elementText(page api.Page, n int) string {
	return suggest.Describe(page.Body, pageOptions(page), n)
}

// newPagePicture keeps what the browser drew of page: the screenshot, and
// each element's box found by its mark in the DOM the browser drew
// (suggest.Marks pairs the page's elements with the marked DOM's).
func newPagePicture(page api.Page, pic *api.PagePicture) *pagePicture {
	if pic == nil || len(pic.Image) == 0 {
		return nil
	}
	out := &pagePicture{Image: pic.Image, Type: pic.ImageType, Width: pic.Width, Height: pic.Height}
	marks := suggest.Marks(page.Body, pageOptions(page), pic.Marked)
	out.Boxes = make([]api.Box, len(marks))
	for n, m := range marks {
		if m >= 0 && m < len(pic.Boxes) {
			out.Boxes[n] = pic.Boxes[m]
		}
	}
	return out
}

// pageAnalysis is what pointing reads of a kept page once: the elements
// that could start an item, and the page's outline.
type pageAnalysis struct {
	starts  []int
	outline []suggest.OutlineSection
	err     error
}

// analyse reads page for pointing.
func analyse(page api.Page) *pageAnalysis {
	a := &pageAnalysis{starts: suggest.Starts(page.Body, pageOptions(page))}
	o, err := suggest.Outline(page.Body, pageOptions(page))
	if err != nil {
		a.err = err
		return a
	}
	a.outline = o.Sections
	return a
}
