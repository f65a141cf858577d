// Package extractor is Dynamo's Wrapper: it turns an annotated legacy HTML page
// into an XMLData document (see docs/annotations.md) plus diagnostics.
//
// # Usage
//
//	res, err := extractor.Extract(body, extractor.Options{
//		URL:         "https://example.org/news.html", // base of relative links
//		RSSID:       "news",
//		ContentType: resp.Header.Get("Content-Type"), // its charset wins
//		Timestamp:   fetchedAt,
//	})
//	switch {
//	case errors.Is(err, extractor.ErrNotAnnotated): // no channel:title: no document
//	case err != nil: // reading failed, or extractor.ErrTooLarge
//	}
//	// res.Document is valid (Validate and the XSD); res.Diagnostics are sorted.
//
// Extract is pure (no network, no clock) and safe for concurrent use; it
// starts no goroutine. The zero Options are valid: the page URL then is
// [DefaultURL] and the rssId [DefaultRSSID].
//
// # How a page is read
//
// The page is converted to UTF-8 first: the charset of Options.ContentType,
// else a byte-order mark (which is dropped), else <meta charset> or
// <meta http-equiv="Content-Type"> in the first 1024 bytes, else detection by
// golang.org/x/net/html/charset on those bytes (valid UTF-8, else
// windows-1252, the HTML default, which also covers ISO-8859-1). When those
// bytes are plain ASCII and declare nothing, there is no evidence either way,
// so the page is decoded as UTF-8 with every byte that is not valid UTF-8 read
// as windows-1252: right for both common legacy cases.
//
// It is then read once, as a stream of golang.org/x/net/html tokens; nothing
// builds a DOM and the page is never held whole. An annotation is a comment
// whose trimmed body is exactly one channel: or item: tag; the tokenizer
// already treats the content of script, style, textarea, title and the other
// raw-text elements as text, so look-alike comments there are not annotations.
// A comment that starts like an annotation but is not one well-formed tag is
// ignored with a warning; any other comment is ordinary. Tag and attribute
// names are case-insensitive; values take single or double quotes.
//
// Open regions form a stack. Text goes to the innermost open region only, so
// a region's value never includes the text of regions nested in it; a region
// whose opening was refused (unknown tag, missing attribute) loses its text:
// neither it nor the regions around it get it (regions nested in it still
// get theirs). A URL region's value is the href of the first <a> in it,
// nested regions included.
// A closing tag closes the innermost open region of its name, and any region
// opened inside it (an error: it does not match the innermost region); a
// closing tag with no open region of its name is ignored (an error when
// another region is open, since it does not match that one; a warning when
// none is); regions still open at the end are closed there (an error).
//
// Values: text has entities decoded, markup removed (script, style, noscript,
// iframe, noembed and noframes content is not text), <br> and block element
// boundaries read as white space, white space (Unicode) collapsed and trimmed,
// characters XML 1.0 does not allow removed, invalid UTF-8 replaced by
// U+FFFD. A URL is the href of the first <a> in the region, else its text,
// resolved against the first <base href> of the page (wherever it is), else
// against the page URL; only http and https results are kept, others are
// dropped with a warning. Images resolve url and link the same way; a missing
// image title or link is the channel's (or item's), as RSS 2.0 requires one.
//
// Items are grouped by their positive integer index and listed in index
// order. An item's id is its id attribute (from any of its annotations, the
// first wins); otherwise "link-" and the first 16 hex digits of the SHA-256
// of its resolved link, or, for an item without a usable link, "text-" and the
// first 16 hex digits of the SHA-256 of title, NUL, description. So an
// article keeps its id when it moves on the page. Colliding ids get "-INDEX"
// appended, with a warning. An item with neither title nor description is
// dropped (an error); one without a link gets the page URL. The channel needs
// a non-empty channel:title, else Extract returns [ErrNotAnnotated]; its link
// defaults to the page URL and its description to "". A singleton field
// (title, link, description, image) given twice keeps the first non-empty
// value, with an error.
//
// Extensions become schema.Extension values, their text as the page wrote
// it. One whose local name is "date" or "pubDate" is also the publication
// time: schema.ParseDate reads it leniently (time layouts first, then
// github.com/araddon/dateparse, after removing decorations such as the "@" of
// "December 08, 2005 @ 08:25 AM"; RFC 822 zone names are honoured; no zone
// means UTC) wherever it is needed (schema.Extensions.Published: feeds, the
// smart policy). A date it cannot read stays text only, with a warning.
// A date written relative to the poll's time ("2 hours ago", "gestern,
// 18:00 Uhr": schema.ParseRelative) is read against Options.Timestamp in
// the resource's zone and stored as the RFC 3339 time it means, since no
// later reader could read the text again; Result.RelativeDates names such
// dates, so that the poller keeps the date of their first reading (the
// extractor itself is pure and knows no earlier version). With
// Options.ExplainDates, Result.Dates says how each date read (`dynamo lint
// --dates`).
//
// # Descriptions and security
//
// Besides its text, a description region that contains markup keeps its HTML
// as the extension content:encoded (schema.ContentNamespace). That HTML comes
// from a page we do not control and ends up in feed readers, so it is
// sanitized by bluemonday with an explicit allow list of the elements feeds
// use (p, br, b, i, em, strong, u, s, sub, sup, small, code, pre,
// blockquote, q, lists, h1-h6, tables, span, div, hr, a[href title],
// img[src alt title width height]): no script, style, iframe, form, event
// handler attributes or style attributes, URLs only http, https and mailto
// (so no javascript: or data:), rel="nofollow" on links; an <a> whose href
// is refused stays as a bare <a>. Relative href, src and cite URLs are made
// absolute before sanitizing, so the scheme policy applies to the URLs
// readers will follow. The descriptions of a page go through bluemonday in
// one call, joined by a random separator, when none of them has an element
// whose state could outlive it (see sanitizer.all); the others, one by one.
// A description bluemonday would give back byte for byte (text without
// entities, quotes, < or >, and only attribute-less tags of allowed
// elements, such as "a <b>bold</b> word<br>") skips it.
// Tags of a region nested in a description stay in the description's HTML
// (keeping it balanced), their text does not. Nothing in this package parses
// HTML with regular expressions.
//
// # Diagnostics
//
// Each problem is a [Diagnostic] at the 1-based line and column of the
// annotation (or tag) concerned. Lines are those of the original page ("\n",
// "\r\n" and a lone "\r" each end a line); columns count characters of the
// page decoded to UTF-8, which for single-byte charsets (ISO-8859-1,
// windows-1252) equals the byte column of the original. Severity follows
// the annotation guide: [Error] when data is lost — an unknown channel: or
// item: tag (the message suggests the closest known tag), an unclosed region,
// a closing tag that does not match the innermost open region (the message
// names both tags and both positions), an annotation comment that does not
// parse, a missing or malformed required attribute, a non-integer index, a
// dropped item, a page without channel:title, a value cut or a limit
// exceeded; [Warning] otherwise — a duplicate singleton field or id, a
// dropped URL, an unreadable date, an empty value, a closing tag when no
// region is open.
//
// # Selectors
//
// A page nobody annotated is extracted with a select block (SELECTORS.md):
// [CompileSelectors] compiles a [SelectSpec] once (CSS by
// github.com/andybalholm/cascadia, XPath 1.0 by github.com/antchfx/xpath
// through github.com/antchfx/htmlquery after "xpath:", an optional
// trailing " @name" taking an attribute), and [Extract] with
// Options.Select set (or [Selectors.Extract]) uses it instead of the
// annotations. This front end parses the page into a tree (it is held
// whole: the poller's max_body bounds it), then fills the same fields the
// annotation front end fills from regions (select_extract.go), and the one
// back end (finish.go) does the rest: URL resolution, sanitizing,
// identity, dates, the document. Text values are read from the tree by the
// same [value] rules, and a description's HTML is written by the same
// region methods (URL placeholders, hidden elements left out).
//
// Choices where SELECTORS.md is silent: a field selector takes its first
// match in the item (with "@attr", the first match that has the
// attribute); XPath is evaluated with the item as context node in the
// whole page (so following-sibling:: and absolute paths work), and an
// expression computing a string gives that string; a link selector that
// matches an element takes the href of the first <a> in it (itself
// included), else its text, as annotations do; an image selector matching
// an element takes the src of its first <img>; without a link selector an
// item's link is its first <a href>; with neither title nor description
// selector, the item's text is its title; a date goes to dc:date. The
// channel title is the channel.title match, else the page's <title>, else
// (with a warning) the page URL. Diagnostics are at the line and column of
// the element concerned (the item, the matched element): html.Parse keeps
// no positions, so the tree is aligned with the page's start tags (by name
// and first attribute, in order; see treePos), once and only when a
// diagnostic or a date reading needs a position; those about the block
// itself are at 1:1. A field selector that matches nothing gives one
// warning per field naming how many and which items, at the first.
//
// A field may be a mapping ([FieldSpec]): a list of selectors (the first
// that yields a value; with join, all values joined), a pattern (RE2, its
// first group else its whole match; no match: the field is empty, with a
// warning quoting the value) and, for the date, a layout tried first (the
// date is then stored as RFC 3339 in the resource's zone). The string
// functions of XPath 1.0 (concat, normalize-space, substring-after…) are
// evaluated by this package when they are the whole expression, each
// argument from the item (package extractor/xpathcall): github.com/antchfx/xpath leaves
// its navigator where a predicate of one argument moved it, and evaluates
// the next argument from there. An item selector that matches nothing, or whose every item
// is dropped, gives no document and an error wrapping [ErrNoItems] (a
// redesigned page never stores an empty version).
//
// No selector costs more than time linear in the page (package extractor/cssmatch):
// cascadia matches a combinator by trying every choice of ancestors, so a
// CSS selector is split into its compound selectors, each compiled by
// cascadia, and matched by one walk of the whole page per selector list
// (one bit per compound on each node: an ancestor, the parent, the
// previous sibling or an earlier sibling in the previous compound's set),
// lists inside :not(), :has() and :haschild() first; sibling positions
// (:nth-*, :only-*) are counted on the way. The result is cascadia's
// QueryAll exactly (a differential test and a fuzz test compare them); a
// single compound of constant-time simple selectors keeps cascadia's own
// matcher. An extraction evaluates such a selector once on the page and
// each item reads the result (evalCache); its cost over all items is then
// the walk plus each item's subtree, as the item's text already costs.
// What cascadia does in more than constant time per element and cannot be
// walked set-wise (:contains() and :matches() read the element's text,
// :lang(), :enabled and :disabled its ancestors) and every XPath
// expression (through a navigator counting its moves) spend a budget of
// 64 units per node of the page plus a constant, per selector and
// extraction; beyond it the selector fails with "costs too much on this
// page" (cssmatch.ErrCost): an item selector gives no document, a field is left
// empty, each with an error diagnostic naming it.
//
// A third front end, schema.org (schemaorg.go), takes the items a page
// publishes as JSON-LD or microdata when the block is {from: schema.org}:
// it fills the same fields through the same setters (the selector front
// end's textField, urlField, descriptionField, imageOf), so the values
// follow the same rules.
//
// Package suggest (the suggester) proposes select blocks for a page; it
// reads pages through what page.go exports ([ParsePage], [Text],
// [CompileField]...), so that it sees a page exactly as extraction does,
// and checks every block it writes with [Extract].
//
// # Filters
//
// A resource's filter (package extractor/filter; SELECTORS.md "filter")
// is not part of Extract: filter.Compile compiles a filter.Spec once, and
// its Apply takes items out of a document, whichever front end made it,
// with the reason of each (filter.Item); the poller applies it
// before versioning, POST /preview and dynamo extract to show what was
// filtered out. Words match case-insensitively (full case folding) as
// whole words (letters, digits and marks of any script make words) in an
// item's title or description, which is its text: the description's HTML
// (content:encoded) is never read. re: entries are RE2 expressions. Lists
// have at most [MaxFilterEntries] entries of [MaxFilterEntryBytes], an
// expression at most 1,000 compiled instructions, so matching stays linear
// in the items' text.
//
// # Limits
//
// Memory grows with the open regions and the extracted values, never with
// the page: a 50 MB page is streamed. [Limits] caps what a hostile page can
// cost, each excess reported as an error diagnostic: open regions (32), items
// (10,000), extensions per channel or item (100), bytes per value (1 MiB, text
// and description HTML each), diagnostics (1,000, then one summary). The only
// hard limit is the size of one HTML token (16 MiB, the tokenizer's buffer):
// beyond it Extract fails with an error wrapping [ErrTooLarge].
package extractor
