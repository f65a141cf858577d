package extractor_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/dynamo-rss/dynamo/extractor"
)

func utf16le(s string) string {
	var b strings.Builder
	b.WriteString("\xFF\xFE")
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteByte(byte(u))
		b.WriteByte(byte(u >> 8))
	}
	return b.String()
}

func TestCharset(t *testing.T) {
	pad := "<p>" + strings.Repeat("plain ASCII text ", 100) + "</p>\n" // more than the 1024 bytes looked at
	const title = "<!-- <channel:title> -->%s<!-- </channel:title> -->"
	for _, tc := range []struct {
		name, contentType, src, want string
		diags                        []string
	}{
		{"utf-8 meta", "", `<meta charset="utf-8">` + strings.Replace(title, "%s", "caf\xc3\xa9", 1), "café", nil},
		{"latin-1 meta", "", `<meta charset="iso-8859-1">` + strings.Replace(title, "%s", "caf\xe9", 1), "café", nil},
		{"http-equiv", "", `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">` + strings.Replace(title, "%s", "it\x92s \x80", 1), "it’s €", nil},
		{"header wins over meta", "text/html; charset=ISO-8859-1", `<meta charset="utf-8">` + strings.Replace(title, "%s", "caf\xe9", 1), "café", nil},
		{"header wins over BOM", "text/html; charset=windows-1252", "\xEF\xBB\xBF" + strings.Replace(title, "%s", "\x93q\x94", 1), "“q”", nil},
		{"BOM wins over meta", "", "\xEF\xBB\xBF" + `<meta charset="windows-1252">` + strings.Replace(title, "%s", "caf\xc3\xa9", 1), "café", nil},
		{"UTF-16 BOM", "", utf16le(strings.Replace(title, "%s", "日本", 1)), "日本", nil},
		{"detected UTF-8", "", strings.Replace(title, "%s", "caf\xc3\xa9", 1), "café", nil},
		{"detected windows-1252", "", strings.Replace(title, "%s", "caf\xe9 \x93q\x94", 1), "café “q”", nil},
		{"undeclared, ASCII start, UTF-8 later", "", pad + strings.Replace(title, "%s", "caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d", 1), "café “q”", nil},
		{"undeclared, ASCII start, Latin-1 later", "", pad + strings.Replace(title, "%s", "caf\xe9 \x93q\x94", 1), "café “q”", nil},
		{"undeclared, ASCII start, both later", "", pad + strings.Replace(title, "%s", "caf\xe9 caf\xc3\xa9", 1), "café café", nil},
		{"undeclared, ASCII start, 0x80 later", "", pad + strings.Replace(title, "%s", "\x80", 1), "€", nil},
		// Three-byte characters past the decoder's 4 KiB buffer: some
		// straddle its end.
		{"undeclared, ASCII start, many later", "", pad + strings.Replace(title, "%s", strings.Repeat("\x80", 3000), 1), strings.Repeat("€", 3000), nil},
		{"declared windows-1252, ASCII start", "", `<meta charset="windows-1252">` + pad + strings.Replace(title, "%s", "\xc3\xa9", 1), "Ã©", nil},
		{"unknown header charset", "text/html; charset=klingon", strings.Replace(title, "%s", "caf\xe9", 1), "café",
			[]string{`1:1: warning: unknown charset "klingon" in content type`}},
		{"malformed content type", "text/html; charset", strings.Replace(title, "%s", "x", 1), "x",
			[]string{`1:1: warning: content type "text/html; charset" is malformed`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := extractor.Extract(strings.NewReader(tc.src), extractor.Options{URL: page, ContentType: tc.contentType})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if got := res.Document.Channel.Title; got != tc.want {
				t.Errorf("title = %q, want %q", got, tc.want)
			}
			got := diagStrings(res.Diagnostics)
			if len(got) != len(tc.diags) {
				t.Fatalf("diagnostics %q, want %q", got, tc.diags)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.diags[i]) {
					t.Errorf("diagnostic %q, want prefix %q", got[i], tc.diags[i])
				}
			}
		})
	}
}

// TestPositions checks line:column on CRLF, CR and transcoded input:
// a Latin-1 byte is one column, as is a multi-byte UTF-8 character.
func TestPositions(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, src, want string
	}{
		{"LF", "", "a\nbc <!-- </item:title> -->", "2:4"},
		{"CRLF", "", "a\r\nb\r\n\r\n  <!-- </item:title> -->", "4:3"},
		{"CR", "", "a\rb\r<!-- </item:title> -->", "3:1"},
		{"CR then LF in different tokens", "", "<p>a\r</p>\n<!-- </item:title> -->", "3:1"},
		{"UTF-8 characters", "", "<meta charset=utf-8>\n\xc3\xa9\xe2\x82\xac<!-- </item:title> -->", "2:3"},
		{"Latin-1 bytes", "text/html; charset=iso-8859-1", "\n\xe9\xe9\xe9<!-- </item:title> -->", "2:4"},
		{"inside a multi-line comment", "", "<!-- x\n -->\n<b\nclass=x>\n <!-- </item:title> -->", "5:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src + "<!-- <channel:title> -->T<!-- </channel:title> -->"
			res, err := extractor.Extract(strings.NewReader(src), extractor.Options{URL: page, ContentType: tc.contentType})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Diagnostics) != 1 {
				t.Fatalf("diagnostics %q", diagStrings(res.Diagnostics))
			}
			d := res.Diagnostics[0]
			if got := strings.Join([]string{strconv.Itoa(d.Line), strconv.Itoa(d.Col)}, ":"); got != tc.want {
				t.Errorf("position %s, want %s", got, tc.want)
			}
		})
	}
}

func TestResultCharset(t *testing.T) {
	const title = "<!-- <channel:title> -->T<!-- </channel:title> -->"
	for _, tc := range []struct{ contentType, src, want string }{
		{"text/html; charset=iso-8859-1", title, "windows-1252"}, // the HTML standard reads ISO-8859-1 as windows-1252
		{"", "<meta charset=utf-8>" + title, "utf-8"},
		{"", "\xFF\xFE" + title, "utf-16le"},
		{"", title, "utf-8, else windows-1252"},
		{"", "\xe9" + title, "windows-1252"},
		{"", "\x80" + title, "windows-1252"},
		// 0x80 at the end of the 1024 bytes looked at, past what the
		// declaration probe reads again: still the evidence it is.
		{"", strings.Repeat(" ", 1022) + "\x80" + title, "windows-1252"},
		{"", strings.Repeat(" ", 1024) + "\x80" + title, "utf-8, else windows-1252"},
	} {
		res, err := extractor.Extract(strings.NewReader(tc.src), extractor.Options{URL: page, ContentType: tc.contentType})
		if res == nil {
			t.Fatalf("%q: nil result, %v", tc.src, err)
		}
		if res.Charset != tc.want {
			t.Errorf("%q %q: charset %q, want %q", tc.contentType, tc.src, res.Charset, tc.want)
		}
	}
}
