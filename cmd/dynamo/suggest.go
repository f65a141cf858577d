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
	"github.com/dynamo-rss/dynamo/suggest"
)

// cmdSuggest tells how to get a feed of a page nobody annotated
// (SELECTORS.md): the page's own feeds, then the best way to read it (its
// annotations, its schema.org items or a select block) and up to three
// alternatives, each with the first items it yields (extracted exactly as
// the poller would) and a one-line reason. Its output is one YAML
// document: the best select block, ready to paste into a resource (or to
// give to extract --select), everything else as comments. With --json it
// prints [suggest.Suggestions] instead. Exit 1 when the page has neither
// a feed nor anything to propose.
func cmdSuggest(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var p pageFlags
	args, asJSON := cutFlag(args, "json")
	path, err := p.parse("suggest", "[--url URL] [--content-type CT] [--json] FILE|-\n"+
		"Tells how to get this page's feed: the feeds it links to itself, then the best way\n"+
		"to read it (its annotations, its schema.org items, or the select block of its main\n"+
		"list) with the first items it yields, and up to three alternatives, each with a\n"+
		"reason. The output is YAML: the best select block, ready to paste, the rest as\n"+
		"comments. --json prints the same as JSON (docs/selectors.md). Exits 1 when the\n"+
		"page has no feed and nothing to propose.", args, stdout, false)
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
	sugs, err := suggest.Page(page, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sugs); err != nil {
			return err
		}
	} else if _, err := io.WriteString(stdout, suggestText(name, sugs)); err != nil {
		return err
	}
	if len(sugs.Proposals) == 0 && len(sugs.Feeds) == 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s: no feed, no annotations, no schema.org items and no repeated structure with links found; write a select block by hand (docs/selectors.md)", name)}
	}
	return nil
}

// cutFlag removes a boolean flag (-name, --name, --name=true|false) from
// args and reports whether it was set.
func cutFlag(args []string, name string) ([]string, bool) {
	out := make([]string, 0, len(args))
	set := false
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		switch a {
		case "-" + name, "--" + name, "-" + name + "=true", "--" + name + "=true":
			set = true
			continue
		case "-" + name + "=false", "--" + name + "=false":
			set = false
			continue
		}
		out = append(out, a)
	}
	return out, set
}

// suggestText is suggest's YAML: the page's feeds and the best proposal
// as comments around the best select block, then the alternatives as
// comments.
func suggestText(name string, sugs *suggest.Suggestions) string {
	var b strings.Builder
	for _, f := range sugs.Feeds {
		title := ""
		if f.Title != "" {
			title = fmt.Sprintf(" %q", f.Title)
		}
		fmt.Fprintf(&b, "# The page has its own feed%s: %s (%s): subscribe to it directly.\n", title, f.URL, f.Type)
	}
	if len(sugs.Proposals) == 0 {
		if len(sugs.Feeds) == 0 {
			fmt.Fprintf(&b, "# dynamo suggest %s: nothing to propose.\n", name)
		}
		return b.String()
	}
	best := sugs.Proposals[0]
	fmt.Fprintf(&b, "# dynamo suggest %s: %s\n", name, best.Reason)
	if best.Select != nil {
		writeSelect(&b, *best.Select, "")
	}
	writeItems(&b, best, "#")
	for i, p := range sugs.Proposals[1:] {
		if i == 0 {
			b.WriteString("#\n# Alternatives:\n")
		}
		fmt.Fprintf(&b, "#\n#   %d. %s\n", i+2, p.Reason)
		if p.Select != nil {
			writeSelect(&b, *p.Select, "#     ")
		}
		writeItems(&b, p, "#    ")
	}
	return b.String()
}

// writeItems writes the first items a proposal yields as comment lines.
func writeItems(b *strings.Builder, p suggest.Proposal, prefix string) {
	fmt.Fprintf(b, "%s\n%s It yields %d items; the first ones:\n", strings.TrimRight(prefix, " "), prefix, p.Count)
	for i, it := range p.Items {
		fmt.Fprintf(b, "%s   %d. %s\n%s      %s\n", prefix, i+1, clip(it.Title, 100), prefix, it.Link)
		if it.Date != "" {
			fmt.Fprintf(b, "%s      date: %s\n", prefix, clip(it.Date, 60))
		}
		if it.Description != "" {
			fmt.Fprintf(b, "%s      %s\n", prefix, clip(it.Description, 100))
		}
	}
	if p.Count > len(p.Items) {
		fmt.Fprintf(b, "%s   … and %d more\n", prefix, p.Count-len(p.Items))
	}
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
	field("  ", "from", s.From)
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
