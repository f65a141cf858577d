package extractor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// peekSize is how much of the page is looked at to choose its encoding
// (the HTML prescan reads at most 1024 bytes).
const peekSize = 4096

// boms are the byte-order marks, which the decoder must not see.
var boms = [...]struct {
	bom   string
	label string
}{
	{"\xEF\xBB\xBF", "utf-8"},
	{"\xFE\xFF", "utf-16be"},
	{"\xFF\xFE", "utf-16le"},
}

// decoder returns the page converted to UTF-8, choosing the encoding in the
// order of docs/annotations.md: the HTTP Content-Type charset, else a byte-order
// mark, else <meta charset> or <meta http-equiv="Content-Type">, else
// detection (valid UTF-8, else windows-1252, the HTML default).
func (b *builder) decoder(br *bufio.Reader) (io.Reader, error) {
	prefix, err := br.Peek(1024)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	var enc encoding.Encoding
	name := ""
	if b.opts.ContentType != "" {
		if _, params, err := mime.ParseMediaType(b.opts.ContentType); err != nil {
			b.warn(pos{1, 1}, fmt.Sprintf("content type %q is malformed: %v", b.opts.ContentType, err))
		} else if cs, ok := params["charset"]; ok {
			if enc, name = charset.Lookup(cs); enc == nil {
				b.warn(pos{1, 1}, fmt.Sprintf("unknown charset %q in content type; detecting the page's encoding", cs))
			}
		}
	}
	for _, m := range boms {
		if bytes.HasPrefix(prefix, []byte(m.bom)) {
			if enc == nil {
				enc, name = charset.Lookup(m.label)
			}
			if _, err := br.Discard(len(m.bom)); err != nil {
				return nil, err
			}
			break
		}
	}
	if enc == nil {
		enc, name, _ = charset.DetermineEncoding(prefix, "")
		if name == "windows-1252" && isASCII(prefix) && !declared(prefix) {
			// Nothing declared a charset and the prefix has no evidence either
			// way: the rest of the page may be UTF-8 as well as windows-1252.
			b.charset = "utf-8, else windows-1252"
			return transform.NewReader(br, utf8OrWindows1252{}), nil
		}
	}
	b.charset = name
	if name == "utf-8" {
		return br, nil // the tokenizer reads UTF-8; invalid bytes become U+FFFD in values
	}
	return transform.NewReader(br, enc.NewDecoder()), nil
}

func isASCII[T string | []byte](p T) bool {
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// declared reports whether an ASCII prefix declares its charset in a <meta>.
// charset.DetermineEncoding does not say whether its answer came from a
// <meta> or from its fallback, so ask it again with one valid UTF-8
// character appended (within the 1024 bytes it reads): without a <meta>,
// detection now answers utf-8; with one, the answer is the <meta>'s.
func declared(prefix []byte) bool {
	const probe = "\u00e9 " // the space: DetermineEncoding drops a final non-ASCII rune
	p := prefix[:min(len(prefix), 1024-len(probe))]
	_, name, _ := charset.DetermineEncoding(append(slices.Clip(p), probe...), "")
	return name != "utf-8"
}

// utf8OrWindows1252 decodes UTF-8, reading each byte that is not part of a
// valid UTF-8 sequence as windows-1252: right for both of the common legacy
// encodings when a page does not say which one it uses.
type utf8OrWindows1252 struct{ transform.NopResetter }

func (utf8OrWindows1252) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		c := src[nSrc]
		if c < utf8.RuneSelf {
			if nDst == len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = c
			nDst++
			nSrc++
			continue
		}
		r, size := utf8.DecodeRune(src[nSrc:])
		if r == utf8.RuneError && size == 1 {
			if !atEOF && !utf8.FullRune(src[nSrc:]) {
				return nDst, nSrc, transform.ErrShortSrc // the rest of the sequence may come
			}
			r = charmap.Windows1252.DecodeByte(c)
		}
		if nDst+utf8.RuneLen(r) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += utf8.EncodeRune(dst[nDst:], r)
		nSrc += size
	}
	return nDst, nSrc, nil
}
