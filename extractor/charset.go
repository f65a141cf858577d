package extractor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
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
// order of ANNOTATIONS.md: the HTTP Content-Type charset, else a byte-order
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
	}
	b.charset = name
	if name == "utf-8" {
		return br, nil // the tokenizer reads UTF-8; invalid bytes become U+FFFD in values
	}
	return transform.NewReader(br, enc.NewDecoder()), nil
}
