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
// # Pointing at the list
//
// The /new page also lets a person point at the page (API.md, "Point at
// the list"): on its screenshot, or on its [Outline] without a browser.
// Elements are named by number: the element nodes of
// [extractor.ParsePage]'s tree in document order, <html> being 0.
//
//   - [Marks] maps those numbers to the ones a browser wrote on its own
//     copy of the page (data-dynamo-box="i"), walking both trees side by
//     side; [Starts] lists the elements worth a link over the screenshot:
//     the items of candidate lists and what they hold with text or a
//     picture; [Items] gives the items a block matches, and [ItemParts]
//     which item each element is part of (a heading's run and a second
//     row included), to outline each item whole and to know which
//     clicks pick an item of a chosen list.
//   - [Like] takes the list that holds the element pointed at (or, for a
//     list's own element clicked between its items, the list it holds), chosen
//     among all the candidate lists (not only the best few Page shows):
//     the lists whose item is the element or holds it (a heading's run of
//     siblings and a table item's second row count as the item); a block
//     that holds two or more items of another of those lists is a
//     section, not an item; then by quality times log2(1+items), the
//     widest list of the same item (every day's posts, not one day's)
//     and the card before its title link. The block is written by
//     spec.go and checked by extraction, as Page's are; [ErrNoList] when
//     no list holds the element.
//   - [Exclude] leaves an item and its like out of a block (":not(.ad)",
//     ":not(:has(.sponsored))", naming the item itself last), checked by
//     extraction to drop those items and keep the others; [Field]
//     rewrites a block's title, date or link from the element pointed at
//     in one item, with the most stable selector that finds the same
//     element first in most items.
//   - [Outline] lists the page's landmarks and headings, and under each
//     the lists found there, each with the element Like takes it from and
//     Like's count.
//
// Each call parses the page once and runs at most a few extractions; a
// 2 MB page takes a few hundred milliseconds (BenchmarkPointLargePage).
//
// This package only reads extractor's exported API; extractor does not
// know it exists.
package suggest
