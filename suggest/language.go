package suggest

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// The page's language, as far as a list's script tells it: a box of
// English headlines on a Chinese portal, or of Spanish ones, is not the
// page's list.

// script is a writing system, coarsely: what tells a box of another
// language at a glance.
type script int

const (
	scriptNone script = iota
	scriptLatin
	scriptCJK // Han, kana, hangul
	scriptCyrillic
	scriptGreek
	scriptArabic
	scriptHebrew
	scriptOther
)

// scriptOf is the script of a letter.
func scriptOf(r rune) script {
	switch {
	case !unicode.IsLetter(r):
		return scriptNone
	case unicode.In(r, unicode.Latin):
		return scriptLatin
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return scriptCJK
	case unicode.In(r, unicode.Cyrillic):
		return scriptCyrillic
	case unicode.In(r, unicode.Greek):
		return scriptGreek
	case unicode.In(r, unicode.Arabic):
		return scriptArabic
	case unicode.In(r, unicode.Hebrew):
		return scriptHebrew
	}
	return scriptOther
}

// scriptCounts counts letters by script.
type scriptCounts [scriptOther + 1]int

func (c *scriptCounts) add(s string) {
	for _, r := range s {
		c[scriptOf(r)]++
	}
}

// main is the script of most letters (a CJK letter counts as three: a
// word is one to three of them), scriptNone without letters.
func (c *scriptCounts) main() script {
	best, bestN := scriptNone, 0
	for s := scriptLatin; s <= scriptOther; s++ {
		n := c[s]
		if s == scriptCJK {
			n *= 3
		}
		if n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

// langScripts are the scripts of the languages <html lang> names, where
// it is not Latin.
var langScripts = map[string]script{
	"zh": scriptCJK, "ja": scriptCJK, "ko": scriptCJK,
	"ru": scriptCyrillic, "uk": scriptCyrillic, "bg": scriptCyrillic, "sr": scriptCyrillic, "mk": scriptCyrillic, "be": scriptCyrillic, "kk": scriptCyrillic,
	"el": scriptGreek, "ar": scriptArabic, "fa": scriptArabic, "ur": scriptArabic, "he": scriptHebrew, "yi": scriptHebrew,
}

// pageScript is the script of the page's language: the one of most
// letters of its text (the body's, up to maxLetters), unless <html lang>
// names a language of a script the text also has much of.
func pageScript(doc *html.Node) script {
	var c scriptCounts
	const maxLetters = 200_000
	letters := 0
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > extractor.MaxTreeDepth || letters > maxLetters {
			return
		}
		switch n.Type {
		case html.TextNode:
			c.add(n.Data)
			letters += len(n.Data)
			return
		case html.ElementNode:
			if extractor.IsHidden(n.DataAtom) || n.DataAtom == atom.Head {
				return
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch, depth+1)
		}
	}
	walk(doc, 0)
	text := c.main()
	if h := extractor.FindElement(doc, atom.Html, "lang"); h != nil {
		lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(attrMatch(h, "lang").s)), "-")
		s, ok := langScripts[lang]
		if !ok && len(lang) >= 2 {
			s = scriptLatin
		}
		if s != scriptNone && s != text && c[s]*20 >= c[text] {
			return s
		}
	}
	return text
}
