// Package filter keeps or drops a document's items by words or RE2
// expressions in their title or description (a resource's filter block:
// [Spec], compiled by [Compile], applied by [Filter.Apply] after extraction
// and before versioning).
package filter

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dynamo-rss/dynamo/schema"
)

// Limits of a filter block. A filter is a short list a person writes
// (the topics to follow, the words of advertising): 64 entries a list and
// 256 bytes an entry cover any such list and any phrase or expression a
// person reads back, and they bound what a filter costs an extraction:
// compiling it, and matching it, in time linear in each item's text (at
// most an entry's length of steps per byte per entry; see [Filter.Apply]).
const (
	MaxEntries    = 64  // entries of include, of exclude
	MaxEntryBytes = 256 // bytes of one entry, "re:" included
	// maxProgram bounds the instructions of one re: expression's
	// compiled program: counted repeats ("x{1000}") expand in it, and
	// matching costs up to one step per instruction per byte of text.
	maxProgram = 1000
)

// Spec is a resource's filter block as written (SELECTORS.md
// "filter"): Include keeps the items matching any of its entries (all
// items when it is empty), then Exclude drops the items matching any of
// its. An entry is a word (or a phrase), matched case-insensitively as
// whole words, or "re:" and an RE2 expression.
type Spec struct {
	Include []string `yaml:"include,omitempty" json:"include,omitempty"`
	Exclude []string `yaml:"exclude,omitempty" json:"exclude,omitempty"`
}

// IsZero reports whether the block has no entry: every item is kept.
func (s Spec) IsZero() bool { return len(s.Include) == 0 && len(s.Exclude) == 0 }

// Equal reports whether two blocks have the same entries in the same order.
func (s Spec) Equal(o Spec) bool {
	return slices.Equal(s.Include, o.Include) && slices.Equal(s.Exclude, o.Exclude)
}

// Error is an invalid entry (or list) of a filter block. Field is
// "include[2]", "exclude[0]", or the list's name for a problem of the
// whole list; Entry is the entry as written ("" for a list).
type Error struct {
	Field string
	Entry string
	Err   error
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %q: %v", e.Field, e.Entry, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Filter is a compiled filter block: [Compile] builds it once per
// definition, and it is safe for concurrent use. A nil *Filter keeps
// every item.
type Filter struct {
	include, exclude []filterEntry
	words            bool // some entry is a word: texts are case-folded
}

// filterEntry is one compiled entry: a word (folded, white space
// collapsed) or an expression.
type filterEntry struct {
	written    string
	word       string
	start, end bool // the word starts, ends with a word character: a boundary is needed there
	re         *regexp.Regexp
}

// Item is an item a filter took out of a document, and why.
type Item struct {
	Item schema.Item
	// Rule is "include" (no include entry matched it) or "exclude";
	// Entry is the exclude entry that matched, as written.
	Rule  string
	Entry string
}

// Reason says why the item was filtered out: "exclude: Sponsored", or
// "include: none matched".
func (f Item) Reason() string {
	if f.Rule == "include" {
		return "include: none matched"
	}
	return f.Rule + ": " + f.Entry
}

// Compile compiles a filter block; a zero block gives a nil
// *Filter. Its error joins one [*Error] per bad entry or list, in
// block order (include first).
func Compile(spec Spec) (*Filter, error) {
	if spec.IsZero() {
		return nil, nil
	}
	f := &Filter{}
	var errs []error
	var err []error
	f.include, err = compileEntries("include", spec.Include)
	errs = append(errs, err...)
	f.exclude, err = compileEntries("exclude", spec.Exclude)
	errs = append(errs, err...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, e := range slices.Concat(f.include, f.exclude) {
		f.words = f.words || e.re == nil
	}
	return f, nil
}

// compileEntries compiles one list of a filter block.
func compileEntries(list string, entries []string) ([]filterEntry, []error) {
	if len(entries) > MaxEntries {
		return nil, []error{&Error{Field: list, Err: fmt.Errorf("%d entries, more than the %d a list may have", len(entries), MaxEntries)}}
	}
	var errs []error
	out := make([]filterEntry, 0, len(entries))
	for i, s := range entries {
		e, err := compileEntry(s)
		if err != nil {
			fe := &Error{Field: fmt.Sprintf("%s[%d]", list, i), Entry: s, Err: err}
			if strings.TrimSpace(s) == "" || len(s) > MaxEntryBytes {
				fe.Entry = "" // nothing to quote, or too much
			}
			errs = append(errs, fe)
			continue
		}
		out = append(out, e)
	}
	return out, errs
}

// compileEntry compiles one entry.
func compileEntry(s string) (filterEntry, error) {
	if len(s) > MaxEntryBytes {
		return filterEntry{}, fmt.Errorf("%d bytes, more than the %d an entry may have", len(s), MaxEntryBytes)
	}
	if expr, ok := strings.CutPrefix(s, "re:"); ok {
		if expr == "" {
			return filterEntry{}, errors.New("has no expression after re:")
		}
		parsed, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return filterEntry{}, reError(err)
		}
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil || len(prog.Inst) > maxProgram {
			return filterEntry{}, fmt.Errorf("too complex an expression (counted repeats such as {100} expand; at most %d steps, write a simpler one)", maxProgram)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return filterEntry{}, fmt.Errorf("not an RE2 expression: %w", err)
		}
		return filterEntry{written: s, re: re}, nil
	}
	word := strings.Join(strings.Fields(s), " ")
	if word == "" {
		return filterEntry{}, errors.New(`an empty word matches nothing; remove it or write a word (or re: and an expression)`)
	}
	first, _ := utf8.DecodeRuneInString(word)
	last, _ := utf8.DecodeLastRuneInString(word)
	return filterEntry{written: s, word: schema.Fold(word), start: wordRune(first), end: wordRune(last)}, nil
}

// reError words a parse error: "not an RE2 expression: missing closing
// ): `(?i`" (without the regexp package's "error parsing regexp").
func reError(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Errorf("not an RE2 expression: %s: `%s`", se.Code, se.Expr)
	}
	return fmt.Errorf("not an RE2 expression: %w", err)
}

// wordRune reports whether r belongs to a word: a letter, a digit, or a
// mark (which continues the letter before it).
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// Apply takes out of doc the items the filter does not keep, in place,
// and returns them in page order with the reason; the kept items keep
// their order and their indexes. An item matches an entry when its title
// or its description matches it. The description is the item's text
// (markup removed, entities decoded, as extraction wrote it): its HTML
// (content:encoded) is never read, so tags, attributes and URLs do not
// match. A word matches case-insensitively (full Unicode case folding:
// "STRASSE" matches "Straße") where it is a whole word: not preceded nor
// followed by a letter, digit or mark ("Anzeige" matches "ANZEIGE: …",
// not "Anzeigenblatt"); an expression matches as regexp.MatchString does,
// the title and the description apart (so ^ is the start of either).
//
// Its cost is linear in the items' text: one case folding per text, and
// per entry a search that takes at most the entry's length of steps per
// byte (RE2 for expressions). A nil *Filter keeps everything.
func (f *Filter) Apply(doc *schema.Document) []Item {
	if f == nil || doc == nil {
		return nil
	}
	var out []Item
	kept := doc.Items[:0]
	for _, it := range doc.Items {
		rule, entry, keep := f.judge(it.Title, it.Description)
		if keep {
			kept = append(kept, it)
			continue
		}
		out = append(out, Item{Item: it, Rule: rule, Entry: entry})
	}
	clear(doc.Items[len(kept):]) // no stale copies behind the slice's length
	doc.Items = kept
	return out
}

// judge decides one item: keep, or the rule and the entry that drop it.
func (f *Filter) judge(title, description string) (rule, entry string, keep bool) {
	t := texts{title: title, description: description}
	if f.words {
		t.foldedTitle, t.foldedDescription = schema.Fold(title), schema.Fold(description)
	}
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, t.matches) {
		return "include", "", false
	}
	if i := slices.IndexFunc(f.exclude, t.matches); i >= 0 {
		return "exclude", f.exclude[i].written, false
	}
	return "", "", true
}

// texts are an item's title and description, and their case foldings
// when the filter has words.
type texts struct {
	title, description             string
	foldedTitle, foldedDescription string
}

func (t texts) matches(e filterEntry) bool {
	if e.re != nil {
		return e.re.MatchString(t.title) || e.re.MatchString(t.description)
	}
	return e.inText(t.foldedTitle) || e.inText(t.foldedDescription)
}

// inText reports whether the word occurs in the folded text as a whole
// word. An occurrence that is not whole moves the search one byte on, so
// each byte of the text starts at most one comparison of the word's
// length.
func (e filterEntry) inText(text string) bool {
	for from := 0; from <= len(text)-len(e.word); {
		j := strings.Index(text[from:], e.word)
		if j < 0 {
			return false
		}
		p := from + j
		if e.start && p > 0 {
			if r, _ := utf8.DecodeLastRuneInString(text[:p]); wordRune(r) {
				from = p + 1
				continue
			}
		}
		end := p + len(e.word)
		if e.end && end < len(text) {
			if r, _ := utf8.DecodeRuneInString(text[end:]); wordRune(r) {
				from = p + 1
				continue
			}
		}
		return true
	}
	return false
}
