package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// maxFindings bounds the findings Check reports.
const maxFindings = 50

// Check verifies the whole store, in one snapshot: every resource's row
// agrees with its versions (count, seq range, latest hash and channel), and
// its item index agrees with what those versions contain (last seq, index,
// last seen, content, folded fields; first seen where the first version is
// kept). It parses every stored document, so it is slow on large stores;
// findings wrap storage.ErrInconsistent.
func (s *Store) Check(ctx context.Context) (err error) {
	defer classifyErr(&err)
	var findings []error
	bad := func(format string, args ...any) {
		if len(findings) < maxFindings {
			findings = append(findings, fmt.Errorf("%w: "+format, append([]any{storage.ErrInconsistent}, args...)...))
		}
	}
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		var orphans []string
		rows, err := tx.Query(ctx, `select distinct r.id from dynamo_resources r
			where (r.versions = 0 or r.gone) and (exists (select 1 from dynamo_versions v where v.resource_id = r.id)
			or exists (select 1 from dynamo_items i where i.resource_id = r.id))`)
		if err != nil {
			return err
		}
		if orphans, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		for _, id := range orphans {
			bad("resource %q has no versions but rows in the versions or items table", id)
		}
		rows, err = tx.Query(ctx, `select id, latest_seq, oldest_seq, versions, hash, title, description from dynamo_resources where versions > 0 and not gone order by id`)
		if err != nil {
			return err
		}
		type res struct {
			id                 string
			latest, oldest     int64
			versions           int
			hash               []byte
			title, description string
		}
		resources, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (res, error) {
			var x res
			err := r.Scan(&x.id, &x.latest, &x.oldest, &x.versions, &x.hash, &x.title, &x.description)
			return x, err
		})
		if err != nil {
			return err
		}
		for _, r := range resources {
			if int64(r.versions) != r.latest-r.oldest+1 {
				bad("resource %q: %d versions do not match seq range %d..%d", r.id, r.versions, r.oldest, r.latest)
			}
			if err := checkResource(ctx, tx, r.id, r.oldest, r.latest, r.hash, r.title, r.description, bad); err != nil {
				return fmt.Errorf("resource %q: %w", r.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return errors.Join(findings...)
}

// want is what the kept versions say about one item id.
type want struct {
	lastSeq  int64
	lastSeen int64
	index    int
	content  storedItem
}

func checkResource(ctx context.Context, tx pgx.Tx, id string, oldest, latest int64, hash []byte, title, description string, bad func(string, ...any)) error {
	rows, err := tx.Query(ctx, `select seq, ts_ns, title, description, items, hash, document from dynamo_versions where resource_id = $1 order by seq`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	items := map[string]*want{}
	firsts := map[string][2]int64{} // item id → first kept seq, its position there
	tsOf := map[int64]int64{}
	expect := oldest
	for rows.Next() {
		var (
			seq, ts  int64
			t, d     string
			n        int
			h        []byte
			document string
		)
		if err := rows.Scan(&seq, &ts, &t, &d, &n, &h, &document); err != nil {
			return err
		}
		if seq != expect {
			bad("resource %q: version %d where %d was expected", id, seq, expect)
		}
		expect = seq + 1
		tsOf[seq] = ts
		doc, err := schema.Unmarshal([]byte(document))
		if err != nil {
			bad("resource %q: version %d: %v", id, seq, err)
			continue
		}
		ch := schema.ContentHash(doc)
		if !bytes.Equal(h, ch[:]) || t != doc.Channel.Title || d != doc.Channel.Description || n != len(doc.Items) || fromNS(ts) != doc.Timestamp {
			bad("resource %q: version %d: its columns disagree with its document", id, seq)
		}
		if seq == latest && (!bytes.Equal(hash, ch[:]) || title != doc.Channel.Title || description != doc.Channel.Description) {
			bad("resource %q: metadata disagrees with the latest version", id)
		}
		for i := range doc.Items {
			it := &doc.Items[i]
			items[it.ID] = &want{lastSeq: seq, lastSeen: ts, index: it.Index, content: toStored(it)}
			if _, ok := firsts[it.ID]; !ok {
				firsts[it.ID] = [2]int64{seq, int64(i)}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if expect != latest+1 {
		bad("resource %q: versions end at %d, latest is %d", id, expect-1, latest)
	}
	rows, err = tx.Query(ctx, `select item_id, first_seen_ns, first_seq, first_pos, last_seen_ns, last_seq, idx, content, title_f, link_f, description_f
		from dynamo_items where resource_id = $1`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var (
			itemID                                 string
			firstSeen, firstSeq, lastSeen, lastSeq int64
			firstPos, idx                          int
			content                                []byte
			tf, lf, df                             string
		)
		if err := rows.Scan(&itemID, &firstSeen, &firstSeq, &firstPos, &lastSeen, &lastSeq, &idx, &content, &tf, &lf, &df); err != nil {
			return err
		}
		seen[itemID] = true
		w := items[itemID]
		if w == nil {
			bad("resource %q: item %q is indexed but in no kept version", id, itemID)
			continue
		}
		var got storedItem
		if err := json.Unmarshal(content, &got); err != nil {
			bad("resource %q: item %q: %v", id, itemID, err)
			continue
		}
		wantJSON, _ := json.Marshal(w.content) // a storedItem always encodes
		gotJSON, _ := json.Marshal(got)
		switch {
		case lastSeq != w.lastSeq || lastSeen != w.lastSeen || idx != w.index:
			bad("resource %q: item %q: last seen in %d at index %d, the versions say %d at %d", id, itemID, lastSeq, idx, w.lastSeq, w.index)
		case !bytes.Equal(gotJSON, wantJSON):
			bad("resource %q: item %q: content differs from version %d's", id, itemID, w.lastSeq)
		case tf != fold(got.Title) || lf != fold(got.Link) || df != fold(got.Description):
			bad("resource %q: item %q: folded fields do not match its content", id, itemID)
		}
		if f := firsts[itemID]; firstSeq > f[0] || firstSeq == f[0] && (int64(firstPos) != f[1] || firstSeen != tsOf[firstSeq]) {
			bad("resource %q: item %q: first seen in %d, position %d; the versions say %d, %d", id, itemID, firstSeq, firstPos, f[0], f[1])
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for itemID := range items {
		if !seen[itemID] {
			bad("resource %q: item %q of the kept versions is not indexed", id, itemID)
		}
	}
	return nil
}
