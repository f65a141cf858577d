package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Save stores doc as the newest version of resource doc.RSSID unless its
// informational content equals the latest version's; see [storage.DB.Save].
// It is one transaction, under the resource row's lock, so saves of one
// resource from any number of nodes are serialized; a nil error means it
// committed.
func (s *Store) Save(ctx context.Context, doc *schema.Document) (_ storage.SaveResult, err error) {
	defer classifyErr(&err)
	p, err := prepare(doc)
	if err != nil {
		return storage.SaveResult{}, fmt.Errorf("save: %w", err)
	}
	var res storage.SaveResult
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := lockResource(ctx, tx, p.id, true)
		if err != nil {
			return err
		}
		res, err = saveLocked(ctx, tx, p, cur)
		return err
	})
	if err != nil {
		return storage.SaveResult{}, fmt.Errorf("save %q: %w", p.id, err)
	}
	if res.Changed {
		s.cache.invalidate(p.id) // this node's reads see its write at once
	}
	return res, nil
}

// prepared is a validated document and what a save writes for it, computed
// outside the transaction.
type prepared struct {
	id   string
	doc  *schema.Document
	hash schema.Hash
	ts   int64
	// filled by fill:
	filled bool
	xml    string
	// the items, column by column, for one unnest insert
	itemIDs               []string
	pos, idx              []int32
	content               []string // JSON of storedItem
	titleF, linkF, descrF []string
}

func prepare(doc *schema.Document) (*prepared, error) {
	if err := storage.ValidateDocument(doc); err != nil {
		return nil, err
	}
	return &prepared{id: doc.RSSID, doc: doc, hash: schema.ContentHash(doc), ts: doc.Timestamp.UnixNano()}, nil
}

// fill computes what a changed save writes: only a save whose content
// differs from the latest version's needs it.
func (p *prepared) fill() error {
	if p.filled {
		return nil
	}
	doc := p.doc
	xmlData, err := schema.Marshal(doc)
	if err != nil {
		return fmt.Errorf("%w: %w", storage.ErrInvalid, err)
	}
	n := len(doc.Items)
	p.xml = string(xmlData)
	p.itemIDs, p.pos, p.idx = make([]string, n), make([]int32, n), make([]int32, n)
	p.content, p.titleF, p.linkF, p.descrF = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range doc.Items {
		it := &doc.Items[i]
		c, err := json.Marshal(toStored(it))
		if err != nil {
			return fmt.Errorf("encode item %q: %w", it.ID, err)
		}
		p.itemIDs[i], p.pos[i], p.idx[i], p.content[i] = it.ID, int32(i), int32(it.Index), string(c)
		p.titleF[i], p.linkF[i], p.descrF[i] = fold(it.Title), fold(it.Link), fold(it.Description)
	}
	p.filled = true
	return nil
}

// fold is [schema.Fold] with a fast path: on ASCII, full Unicode case
// folding is exactly ASCII lower-casing.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return schema.Fold(s)
		}
	}
	return strings.ToLower(s)
}

// current is the locked resource row as a save or lease sees it.
type current struct {
	latest, oldest int64
	versions       int
	hash           []byte
	gone           bool
	owner          *string
}

// lockResource locks id's row for the transaction, creating it when create
// is set; without create, a missing row is storage.ErrNotFound.
func lockResource(ctx context.Context, tx pgx.Tx, id string, create bool) (current, error) {
	const q = `select latest_seq, oldest_seq, versions, hash, gone, lease_owner from dynamo_resources where id = $1 for update`
	var c current
	err := tx.QueryRow(ctx, q, id).Scan(&c.latest, &c.oldest, &c.versions, &c.hash, &c.gone, &c.owner)
	if errors.Is(err, pgx.ErrNoRows) && create {
		if _, err := tx.Exec(ctx, `insert into dynamo_resources (id) values ($1) on conflict (id) do nothing`, id); err != nil {
			return current{}, fmt.Errorf("create resource: %w", err)
		}
		err = tx.QueryRow(ctx, q, id).Scan(&c.latest, &c.oldest, &c.versions, &c.hash, &c.gone, &c.owner)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return current{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	if err != nil {
		return current{}, fmt.Errorf("lock resource: %w", err)
	}
	return c, nil
}

const upsertItems = `
insert into dynamo_items (resource_id, item_id, first_seen_ns, first_seq, first_pos, last_seen_ns, last_seq, idx, content, title_f, link_f, description_f)
select $1, u.item_id, $2, $3, u.pos, $2, $3, u.idx, u.content::jsonb, u.tf, u.lf, u.df
from unnest($4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[]) as u(item_id, pos, idx, content, tf, lf, df)
on conflict (resource_id, item_id) do update set
	last_seen_ns = excluded.last_seen_ns, last_seq = excluded.last_seq, idx = excluded.idx, content = excluded.content,
	title_f = excluded.title_f, link_f = excluded.link_f, description_f = excluded.description_f`

// saveLocked is Save's body inside a transaction holding the resource's
// row lock: it writes the version, the items and the metadata, or nothing
// when the content is unchanged.
func saveLocked(ctx context.Context, tx pgx.Tx, p *prepared, cur current) (storage.SaveResult, error) {
	if cur.gone {
		return storage.SaveResult{}, gone(p.id)
	}
	if cur.versions > 0 && string(cur.hash) == string(p.hash[:]) {
		return storage.SaveResult{Changed: false, Seq: uint64(cur.latest), Versions: cur.versions}, nil
	}
	if err := p.fill(); err != nil {
		return storage.SaveResult{}, err
	}
	seq := cur.latest + 1
	oldest := cur.oldest
	if cur.versions == 0 {
		oldest = seq
	}
	d := p.doc
	b := &pgx.Batch{}
	b.Queue(`insert into dynamo_versions (resource_id, seq, ts_ns, title, description, items, hash, document) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
		p.id, seq, p.ts, d.Channel.Title, d.Channel.Description, len(d.Items), p.hash[:], p.xml)
	if len(d.Items) > 0 {
		b.Queue(upsertItems, p.id, p.ts, seq, p.itemIDs, p.pos, p.idx, p.content, p.titleF, p.linkF, p.descrF)
	}
	b.Queue(`update dynamo_resources set url = $2, created_ns = case when versions = 0 then $3 else created_ns end, updated_ns = $3,
		latest_seq = $4, oldest_seq = $5, versions = versions + 1, hash = $6, title = $7, description = $8 where id = $1`,
		p.id, d.URL, p.ts, seq, oldest, p.hash[:], d.Channel.Title, d.Channel.Description)
	b.Queue(notifySQL, p.id)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return storage.SaveResult{}, fmt.Errorf("write version %d: %w", seq, err)
	}
	return storage.SaveResult{Changed: true, Seq: uint64(seq), Versions: cur.versions + 1}, nil
}

// storedItem is the JSON an item's latest content is kept as: the whole
// schema.Item but its index (kept in its own column).
type storedItem struct {
	ID          string       `json:"id"`
	Title       string       `json:"title"`
	Link        string       `json:"link"`
	Description string       `json:"description"`
	Image       *storedImage `json:"image,omitempty"`
	Extensions  []storedExt  `json:"extensions,omitempty"`
}

type storedImage struct {
	Title string `json:"title"`
	Link  string `json:"link"`
	URL   string `json:"url"`
}

type storedExt struct {
	URI       string `json:"uri"`
	Prefix    string `json:"prefix"`
	LocalName string `json:"local_name"`
	Value     string `json:"value"`
}

func toStored(it *schema.Item) storedItem {
	s := storedItem{ID: it.ID, Title: it.Title, Link: it.Link, Description: it.Description}
	if it.Image != nil {
		s.Image = &storedImage{Title: it.Image.Title, Link: it.Image.Link, URL: it.Image.URL}
	}
	for _, x := range it.Extensions {
		s.Extensions = append(s.Extensions, storedExt{URI: x.URI, Prefix: x.Prefix, LocalName: x.LocalName, Value: x.Value})
	}
	return s
}

func (s *storedItem) item(index int) schema.Item {
	it := schema.Item{Index: index, ID: s.ID, Title: s.Title, Link: s.Link, Description: s.Description}
	if s.Image != nil {
		it.Image = &schema.Image{Title: s.Image.Title, Link: s.Image.Link, URL: s.Image.URL}
	}
	if len(s.Extensions) > 0 {
		it.Extensions = make(schema.Extensions, len(s.Extensions))
		for i, x := range s.Extensions {
			it.Extensions[i] = schema.Extension{URI: x.URI, Prefix: x.Prefix, LocalName: x.LocalName, Value: x.Value}
		}
	}
	return it
}
