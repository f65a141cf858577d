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
