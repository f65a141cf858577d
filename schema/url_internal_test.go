package schema

import "testing"

// TestPlainURLAgreesWithParse: the fast check of a common URL says yes
// only to strings url.Parse takes as absolute URIs without white space,
// and says yes to the common ones.
func TestPlainURLAgreesWithParse(t *testing.T) {
	common := []string{"https://example.org/", "http://example.org", "https://a-b.example_x~y:8080/p?q=1#f", "http://h:1/", "http://h:90/", "https://example.org/a/b.html?x=1&y=2"}
	for _, s := range common {
		if !plainURL(s) {
			t.Errorf("plainURL(%q) = false, want true", s)
		}
	}
	for _, s := range append(common,
		"http://", "https://:80/", "http://h:/", "http://h:x/", "http://h:80x/", "http://h x/", "http://h/a b", "http://h/a\tb",
		"http://h/\x7f", "http://h/%zz", "http://h/%41", "http://h\x00/", "http://h@x/", "http://[::1]/", "http://h:8080", "http://h?x", "http://h#x",
		"ftp://h/", "HTTP://h/", "http:/h", "http://h/\x1f", "http://h:99999999999999999999/") {
		if plainURL(s) && !(absoluteURL(s) && isURI(s)) {
			t.Errorf("plainURL(%q) = true, but url.Parse does not take it as an absolute URI without white space", s)
		}
	}
}

// TestLegalXMLEveryByte: LegalXML agrees with the rune-by-rune reference
// for every byte at every place of strings of 7 to 17 bytes (either side
// of the eight-byte fast path's blocks), in ASCII and after a multi-byte
// character.
func TestLegalXMLEveryByte(t *testing.T) {
	for _, n := range []int{7, 8, 9, 16, 17} {
		for pos := range n {
			for c := range 256 {
				for _, fill := range []byte{'a', ' '} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					b[pos] = byte(c)
					for _, s := range []string{string(b), "é" + string(b)} {
						if got, want := LegalXML(s), legalXMLReference(s); got != want {
							t.Fatalf("LegalXML(%q) = %v, reference %v", s, got, want)
						}
					}
				}
			}
		}
	}
}

// TestPlainHostBytes: every end of the ranges of host bytes a plain URL
// may have.
func TestPlainHostBytes(t *testing.T) {
	for _, host := range []string{"az", "AZ", "09", "a.b", "a-b", "a_b", "a~b"} {
		if s := "http://" + host + "/"; !plainURL(s) {
			t.Errorf("plainURL(%q) = false", s)
		}
	}
	for _, c := range []byte{'`', '{', '@', '[', '/', ':', '!', 0x80} {
		if plainHostByte := isPlainHostByte(c); plainHostByte {
			t.Errorf("isPlainHostByte(%q) = true", c)
		}
	}
}

// TestIsXMLCharBounds: each end of each range of XML 1.0's Char, and the
// code points just outside.
func TestIsXMLCharBounds(t *testing.T) {
	for r, want := range map[rune]bool{
		0x08: false, 0x09: true, 0x0A: true, 0x0B: false, 0x0C: false, 0x0D: true, 0x0E: false,
		0x1F: false, 0x20: true, 0xD7FF: true, 0xD800: false, 0xDFFF: false, 0xE000: true,
		0xFFFD: true, 0xFFFE: false, 0xFFFF: false, 0x10000: true, 0x10FFFF: true, 0x110000: false, -1: false,
	} {
		if got := IsXMLChar(r); got != want {
			t.Errorf("IsXMLChar(%#x) = %v, want %v", r, got, want)
		}
	}
}

// TestNCNameAgainstTheGrammar: IsNCName agrees with XML 1.0 fifth
// edition's NameStartChar and NameChar (less ':'), written here from the
// Recommendation's production, for every code point as a name's first
// character and as a later one.
func TestNCNameAgainstTheGrammar(t *testing.T) {
	in := func(r rune, ranges [][2]rune) bool {
		for _, x := range ranges {
			if r >= x[0] && r <= x[1] {
				return true
			}
		}
		return false
	}
	start := [][2]rune{{'A', 'Z'}, {'_', '_'}, {'a', 'z'}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x2FF}, {0x370, 0x37D},
		{0x37F, 0x1FFF}, {0x200C, 0x200D}, {0x2070, 0x218F}, {0x2C00, 0x2FEF}, {0x3001, 0xD7FF}, {0xF900, 0xFDCF},
		{0xFDF0, 0xFFFD}, {0x10000, 0xEFFFF}}
	more := [][2]rune{{'-', '-'}, {'.', '.'}, {'0', '9'}, {0xB7, 0xB7}, {0x300, 0x36F}, {0x203F, 0x2040}}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates have no UTF-8
		}
		s := string(r)
		if got, want := IsNCName(s), in(r, start); got != want {
			t.Fatalf("IsNCName(%q) (U+%04X first) = %v, want %v", s, r, got, want)
		}
		if got, want := IsNCName("a"+s), in(r, start) || in(r, more); got != want {
			t.Fatalf("IsNCName(%q) (U+%04X after a) = %v, want %v", "a"+s, r, got, want)
		}
	}
}

// TestTermWithoutNewTerm: a Term written as a literal (its folded value
// not computed) matches as one from NewTerm does.
func TestTermWithoutNewTerm(t *testing.T) {
	for _, ts := range []Terms{{{Op: And, Field: FieldTitle, Value: "BUDGET"}}, {NewTerm(And, FieldTitle, "BUDGET")}} {
		if !ts.Match("The budget passed", "", "") || ts.Match("The tram line", "", "") {
			t.Errorf("%+v: want a match on the title with budget only", ts)
		}
	}
}
