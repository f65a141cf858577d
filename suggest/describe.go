package suggest

import (
	"github.com/dynamo-rss/dynamo/extractor"
)

// describeLen bounds the text [Describe] gives of an element.
const describeLen = 80

// Describe is element (numbered as [Like] numbers them) for people: the
// start of its text, else its tag ("<img>"); "" when it is not on the
// page.
func Describe(page []byte, opts extractor.Options, element int) string {
	pt, err := newPointer(page, opts)
	if err != nil {
		return ""
	}
	e, err := pt.element(element)
	if err != nil {
		return ""
	}
	if t := extractor.Text(e); t != "" {
		return clip(t, describeLen)
	}
	return "<" + e.Data + ">"
}
