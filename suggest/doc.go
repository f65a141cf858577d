// Package suggest tells how to get a feed of a page nobody annotated
// (SELECTORS.md, `dynamo suggest`, the /new page): the feeds the page links
// to itself, then, best first, the ways dynamo can read it — its
// annotations, its schema.org items, or a select block for one of its
// repeated structures — each with the first items it yields.
//
// # Usage
//
//	sugs, err := suggest.Page(body, extractor.Options{URL: pageURL, ContentType: ct})
//	// sugs.Feeds: subscribe to them directly.
//	// sugs.Proposals[0].Select: the block to paste under a resource.
//
// Page is pure (no network, no clock) and safe for concurrent use.
// [Suggestions] is plain data with JSON tags (docs/selectors.md documents
// the shape); `dynamo suggest` prints it as YAML, or as JSON with --json.
//
// # How it reads a page
//
// The page is decoded and parsed exactly as extraction does
// ([extractor.ParsePage]), and text is read by the same rules
// ([extractor.Text]). Candidate lists are groups of same-shaped elements;
// each is scored the way a person reads a page (groups.go says how), and
// a select block is written for the best ones (spec.go): an item selector
// of the stable kind a person writes, then title, link, description,
// date and image selectors relative to the item, each checked on the page
// with [extractor.CompileField]. Every block is then run through
// [extractor.Extract], as the poller would: a proposal's count and items
// are what extraction yields, and a block that yields nothing is not
// proposed.
//
// This package only reads extractor's exported API; extractor does not
// know it exists.
package suggest
