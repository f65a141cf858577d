package suggest

// "Not this one": a chosen list without the item pointed at, and its like.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// Exclude returns spec with an item selector that leaves out the item
// the element numbered element is in, and the items of its kind, and
// nothing else: by a class or attribute that item has and the others do
// not (":not(.ad)"), else by a descendant that marks it
// (":not(:has(.sponsored))", or its text), else, last, by naming it (its
// id, its link). The result is checked by extraction. The error is an
// element in no item of spec, or an exclusion that would leave no item.
func Exclude(page []byte, opts extractor.Options, spec extractor.SelectSpec, element int) (Proposal, error) {
	pt, items, x, _, err := pointedItem(page, opts, spec, element)
	if err != nil {
		return Proposal{}, err
	}
	if strings.HasPrefix(strings.TrimSpace(spec.Item), "xpath:") {
		return Proposal{}, errors.New("the item selector is an XPath expression: write the exclusion into it by hand")
	}
	if len(items) == 1 {
		return Proposal{}, errors.New("the list has one item: leaving it out would leave none")
	}
	before, ok := tryProposal(page, opts, &spec)
	if !ok {
		return Proposal{}, errors.New("the block yields no items on this page")
	}
	for _, f := range exclusions(x, items) {
		out := spec
		out.Item = withNot(spec.Item, f)
		got := pt.query(out.Item)
		if len(got) == 0 || len(got) == len(items) || slices.Contains(got, x) || !subsequence(got, items) {
			continue
		}
		p, ok := tryProposal(page, opts, &out)
		dropped := len(items) - len(got)
		if !ok || p.Count >= before.Count || before.Count == len(items) && p.Count != before.Count-dropped {
			continue
		}
		p.Kind = KindSelectors
		p.Where = pt.sg.where(got)
		p.Reason = reason(p.Count, p.Where, fmt.Sprintf("without %d like the one pointed at (%s)", dropped, f))
		return p, nil
	}
	return Proposal{}, errors.New("no selector leaves out that item and keeps the others: every other item looks the same")
}

// exclusions are the selectors that may name x's kind among items, the
// best first: x's classes the others lack (an ad's word first, then the
// rarest), its attributes, a descendant's class, a descendant's short
// text, then x itself (its id, its link).
func exclusions(x *html.Node, items []*html.Node) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	holders := func(f func(*html.Node) bool) int { return countIf(items, f) }
	cls := uniq(classes(x))
	cls = slices.DeleteFunc(cls, func(c string) bool {
		return !cssIdent(c) || !stableClass(c) && !adWord(c) || holders(func(n *html.Node) bool { return slices.Contains(classes(n), c) }) == len(items)
	})
	slices.SortStableFunc(cls, func(a, b string) int {
		if d := boolInt(!adWord(a)) - boolInt(!adWord(b)); d != 0 {
			return d
		}
		return holders(func(n *html.Node) bool { return slices.Contains(classes(n), a) }) -
			holders(func(n *html.Node) bool { return slices.Contains(classes(n), b) })
	})
	for _, c := range cls {
		add("." + c)
	}
	for _, a := range x.Attr {
		if a.Namespace != "" || a.Key == "id" || a.Key == "class" || a.Key == "style" || a.Key == "href" || !cssIdent(a.Key) || len(a.Val) > 60 || strings.ContainsAny(a.Val, "\"\\\n") {
			continue
		}
		add("[" + a.Key + "=" + strconv.Quote(a.Val) + "]")
	}
	// A descendant that marks it: a class only such items have, then a
	// short text of its own ("Sponsored", "Anzeige").
	k := 0
	var marks, texts []string
	walkElements(x, func(d *html.Node) {
		if d == x || k > 200 {
			return
		}
		k++
		for _, c := range classes(d) {
			if cssIdent(c) && (stableClass(c) || adWord(c)) {
				marks = append(marks, c)
			}
		}
		if t, ok := shortText(d, 20); ok && t != "" && !hasElementChild(d) && !strings.ContainsAny(t, "\"\\") {
			texts = append(texts, ":has("+d.Data+":contains("+strconv.Quote(t)+"))")
		}
	})
	slices.SortStableFunc(marks, func(a, b string) int { return boolInt(!adWord(a)) - boolInt(!adWord(b)) })
	for _, c := range marks {
		add(":has(." + c + ")")
	}
	for _, t := range texts {
		add(t)
	}
	if id := attrMatch(x, "id").s; cssIdent(id) {
		add("#" + id)
	}
	for _, c := range uniq(classes(x)) {
		if cssIdent(c) {
			add("." + c) // a class that differs per item: this one alone
		}
	}
	if a := extractor.FindElement(x, atom.A, "href"); a != nil {
		if h := attrMatch(a, "href").s; !strings.ContainsAny(h, "\"\\\n") {
			add(":has(a[href=" + strconv.Quote(h) + "])")
		}
	}
	return out
}

// adWords mark an advertisement's class.
var adWords = []string{"ad", "ads", "advert", "advertisement", "sponsored", "sponsor", "promo", "promoted", "promotion", "anzeige", "pub"}

func adWord(c string) bool {
	return slices.ContainsFunc(identWords(c), func(w string) bool { return slices.Contains(adWords, w) })
}

func hasElementChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return true
		}
	}
	return false
}

// withNot appends :not(f) to each selector of a selector list.
func withNot(item, f string) string {
	var parts []string
	depth, start := 0, 0
	quote := rune(0)
	for i, r := range item {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '(' || r == '[':
			depth++
		case r == ')' || r == ']':
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, item[start:i])
			start = i + 1
		}
	}
	parts = append(parts, item[start:])
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p) + ":not(" + f + ")"
	}
	return strings.Join(parts, ", ")
}

// subsequence reports whether every node of a is in b, in b's order.
func subsequence(a, b []*html.Node) bool {
	j := 0
	for _, n := range a {
		for j < len(b) && b[j] != n {
			j++
		}
		if j == len(b) {
			return false
		}
		j++
	}
	return true
}
