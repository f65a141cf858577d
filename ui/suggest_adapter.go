package ui

// The one place where the pages read package suggest: the pages turn
// what it proposes into pageOffer, so a change of its Go API is a change of
// this file only.

import (
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
