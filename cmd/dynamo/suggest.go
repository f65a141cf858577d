package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dynamo-rss/dynamo/extractor"
)

// suggestItems is how many of the items the best block yields are shown.
const suggestItems = 5

// cmdSuggest proposes a select block for a page nobody annotated. Its
// output is one YAML document: the best select block, ready to paste into
// a resource (or to give to extract --select), then, as comments, the first
// items it yields (extracted exactly as the poller would) and the
// runners-up. Exit 1 when the page has no repeated structure with links.
func cmdSuggest(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var p pageFlags
	path, err := p.parse("suggest", "[--url URL] [--content-type CT] FILE|-\n"+
		"Finds the repeated structures of a page nobody annotated (sibling elements of the\n"+
		"same shape that carry a link and text), ranks them, and prints the best select\n"+
		"block as YAML ready to paste, the first items it yields and the runners-up.\n"+
		"Exits 1 when the page has no such structure.", args, stdout, false)
	if err != nil {
		return err
	}
	opts, err := p.options(path)
	if err != nil {
		return err
	}
	r, name, err := p.open(ctx, path, stdin, &opts)
	if err != nil {
		return err
	}
	page, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return fmt.Errorf("read page: %w", err)
	}
	sugs, err := extractor.Suggest(bytes.NewReader(page), opts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(sugs) == 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: no repeated structure with links and text found; write a select block by hand (docs/selectors.md)", name)}
	}
	best := sugs[0]
	var b strings.Builder
	fmt.Fprintf(&b, "# dynamo suggest %s: the best of %d repeated structures (score %.2f: %s)\n", name, len(sugs), best.Score, best.Why)
	writeSelect(&b, best.Spec, "")
	sel, err := extractor.CompileSelectors(best.Spec)
	if err != nil {
		return fmt.Errorf("suggested block does not compile: %w", err)
	}
	res, err := sel.Extract(bytes.NewReader(page), opts)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "#\n# It yields no document: %v\n", err)
	default:
		doc := res.Document
		fmt.Fprintf(&b, "#\n# It yields %d items (channel %q); the first ones:\n", len(doc.Items), doc.Channel.Title)
		for i, it := range doc.Items {
			if i == suggestItems {
				fmt.Fprintf(&b, "#   … and %d more\n", len(doc.Items)-i)
				break
			}
			fmt.Fprintf(&b, "#   %d. %s\n#      %s\n", it.Index, clip(it.Title, 100), it.Link)
			if it.Description != "" {
				fmt.Fprintf(&b, "#      %s\n", clip(it.Description, 100))
			}
			for _, x := range it.Extensions {
				if x.LocalName == "date" {
					fmt.Fprintf(&b, "#      date: %s\n", clip(x.Value, 60))
				}
			}
		}
	}
	if res != nil {
		for _, d := range res.Diagnostics {
			fmt.Fprintf(&b, "#   %s: %s\n", d.Severity, clip(d.Message, 160))
		}
	}
	if len(sugs) > 1 {
		b.WriteString("#\n# Runners-up:\n")
		for _, s := range sugs[1:] {
			fmt.Fprintf(&b, "#   score %.2f, %d items (%s):\n", s.Score, s.Items, s.Why)
			writeSelect(&b, s.Spec, "#     ")
		}
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

// writeSelect writes a select block as YAML, every value double-quoted
// (a JSON string is a YAML double-quoted scalar), each line after prefix.
func writeSelect(b *strings.Builder, s extractor.SelectSpec, prefix string) {
	fmt.Fprintf(b, "%sselect:\n", prefix)
	field := func(indent, key, v string) {
		if v != "" {
			var q bytes.Buffer
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false) // "a > b", not "a \u003e b"
			_ = enc.Encode(v)        // a string always encodes
			fmt.Fprintf(b, "%s%s%s: %s\n", prefix, indent, key, bytes.TrimSpace(q.Bytes()))
		}
	}
	field("  ", "item", s.Item)
	field("  ", "title", s.Title)
	field("  ", "link", s.Link)
	field("  ", "description", s.Description)
	field("  ", "date", s.Date)
	field("  ", "image", s.Image)
	field("  ", "id", s.ID)
	if !s.Channel.IsZero() {
		fmt.Fprintf(b, "%s  channel:\n", prefix)
		field("    ", "title", s.Channel.Title)
		field("    ", "link", s.Channel.Link)
		field("    ", "description", s.Channel.Description)
		field("    ", "image", s.Channel.Image)
	}
}

// clip shortens s to n characters for a comment line.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
