package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// readID refuses an id no resource can have: ErrNotFound (wrapping ErrInvalid too).
func readID(id string) error {
	if err := storage.ValidateID(id); err != nil {
		return fmt.Errorf("%w (%w)", storage.ErrNotFound, err)
	}
	return nil
}

const resourceColumns = `id, url, created_ns, updated_ns, versions, latest_seq, title, description, hash, gone`

func scanInfo(row pgx.Row) (storage.ResourceInfo, bool, error) {
	var (
		info             storage.ResourceInfo
		created, updated int64
		latest           int64
		hash             []byte
		isGone           bool
	)
	err := row.Scan(&info.ID, &info.URL, &created, &updated, &info.Versions, &latest, &info.Title, &info.Description, &hash, &isGone)
	if err != nil {
		return storage.ResourceInfo{}, false, err
	}
	info.Created, info.Updated, info.LatestSeq = fromNS(created), fromNS(updated), uint64(latest)
	copy(info.Hash[:], hash)
	return info, isGone, nil
}

// Resources lists every resource with stored versions, sorted by id
// (byte-wise). The list is cached until any resource changes (see infoCache).
func (s *Store) Resources(ctx context.Context) (_ []storage.ResourceInfo, err error) {
	defer classifyErr(&err)
	all, gen, ok := s.cache.list()
	if ok {
		return all, nil
	}
	all, err = s.resources(ctx)
	if err == nil {
		s.cache.fillList(all, gen)
	}
	return all, err
}

func (s *Store) resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	rows, err := s.pool.Query(ctx, `select `+resourceColumns+` from dynamo_resources where versions > 0 order by id`)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	var out []storage.ResourceInfo
	for rows.Next() {
		info, _, err := scanInfo(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("list resources: %w", err)
		}
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return out, nil
}

// Resource describes one resource; ErrNotFound if it has no versions. The
// info is cached, coherent across nodes through LISTEN/NOTIFY (see
// infoCache).
func (s *Store) Resource(ctx context.Context, id string) (_ storage.ResourceInfo, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return storage.ResourceInfo{}, err
	}
	info, gen, ok := s.cache.get(id)
	if ok {
		return info, nil
	}
	info, err = s.resource(ctx, id)
	if err == nil {
		s.cache.fill(id, info, gen)
	}
	return info, err
}

func (s *Store) resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	info, isGone, err := scanInfo(s.pool.QueryRow(ctx, `select `+resourceColumns+` from dynamo_resources where id = $1`, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	case err != nil:
		return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, err)
	case isGone:
		return storage.ResourceInfo{}, gone(id)
	case info.Versions == 0:
		return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	return info, nil
}

// meta reads what locating a version needs: ErrNotFound for a resource
// without versions, the tombstone's error for a gone one.
func (s *Store) meta(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id string) (latest int64, versions int, err error) {
	var isGone bool
	err = q.QueryRow(ctx, `select latest_seq, versions, gone from dynamo_resources where id = $1`, id).Scan(&latest, &versions, &isGone)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, 0, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	case err != nil:
		return 0, 0, err
	case isGone:
		return 0, 0, gone(id)
	case versions == 0:
		return 0, 0, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	return latest, versions, nil
}

// Version returns the n-th newest version (1 = newest); ErrNotFound past the history.
func (s *Store) Version(ctx context.Context, id string, n int) (_ *schema.Document, _ storage.VersionInfo, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return nil, storage.VersionInfo{}, err
	}
	var (
		vi  storage.VersionInfo
		doc *schema.Document
	)
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		latest, versions, err := s.meta(ctx, tx, id)
		if err != nil {
			return err
		}
		if n < 1 || n > versions {
			return fmt.Errorf("version %d of %q (%d kept): %w", n, id, versions, storage.ErrNotFound)
		}
		seq := latest - int64(n) + 1
		var (
			ts  int64
			xml string
		)
		err = tx.QueryRow(ctx, `select ts_ns, title, description, items, document from dynamo_versions where resource_id = $1 and seq = $2`, id, seq).
			Scan(&ts, &vi.Title, &vi.Description, &vi.Items, &xml)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: version %d of %q is missing", storage.ErrInconsistent, seq, id)
		}
		if err != nil {
			return err
		}
		vi.Seq, vi.Timestamp = uint64(seq), fromNS(ts)
		if doc, err = schema.Unmarshal([]byte(xml)); err != nil {
			return fmt.Errorf("version %d of %q: %w", seq, id, err)
		}
		return nil
	})
	if err != nil {
		return nil, storage.VersionInfo{}, fmt.Errorf("version %d of %q: %w", n, id, err)
	}
	return doc, vi, nil
}

// inReadTx runs fn in a read-only repeatable-read transaction: one snapshot.
func (s *Store) inReadTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	err = fn(tx)
	return errors.Join(err, rollback(ctx, tx))
}

// Versions lists versions newest first, skipping offset and returning at
// most limit (limit <= 0: all).
func (s *Store) Versions(ctx context.Context, id string, offset, limit int) (_ []storage.VersionInfo, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("versions of %q: %w: negative offset %d", id, storage.ErrInvalid, offset)
	}
	var out []storage.VersionInfo
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := s.meta(ctx, tx, id); err != nil {
			return err
		}
		q := `select seq, ts_ns, title, description, items from dynamo_versions where resource_id = $1 order by seq desc offset $2`
		if limit > 0 {
			q += ` limit ` + strconv.Itoa(limit)
		}
		rows, err := tx.Query(ctx, q, id, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				vi      storage.VersionInfo
				seq, ts int64
			)
			if err := rows.Scan(&seq, &ts, &vi.Title, &vi.Description, &vi.Items); err != nil {
				return err
			}
			vi.Seq, vi.Timestamp = uint64(seq), fromNS(ts)
			out = append(out, vi)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %q: %w", id, err)
	}
	return out, nil
}

// Items returns items newest first by first seen, one per item id, with
// its latest content; a keyword query is evaluated in SQL on the folded
// columns (strpos on text is a byte-exact substring test) and checked again
// with schema.Terms.MatchFolded.
func (s *Store) Items(ctx context.Context, id string, q storage.ItemQuery) (_ []storage.Item, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return nil, err
	}
	var out []storage.Item
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := s.meta(ctx, tx, id); err != nil {
			return err
		}
		sql, args := itemsQuery(id, q)
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				first, last, seq int64
				idx              int
				content          []byte
				tf, lf, df       string
			)
			if err := rows.Scan(&first, &last, &seq, &idx, &content, &tf, &lf, &df); err != nil {
				return err
			}
			if len(q.Terms) > 0 && !q.Terms.MatchFolded(tf, lf, df) {
				continue
			}
			var si storedItem
			if err := json.Unmarshal(content, &si); err != nil {
				return fmt.Errorf("decode item: %w", err)
			}
			out = append(out, storage.Item{Item: si.item(idx), FirstSeen: fromNS(first), LastSeen: fromNS(last), Seq: uint64(seq)})
			if q.Max > 0 && len(out) >= q.Max {
				break
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("items of %q: %w", id, err)
	}
	return out, nil
}

// itemsQuery builds the items query: the terms become a condition combined
// strictly left to right, as schema.Terms evaluates them. A term PostgreSQL
// cannot compare (invalid UTF-8, NUL) becomes true, which only widens the
// condition (and/or are monotone); the rows are then filtered by
// MatchFolded alone and the query has no LIMIT.
func itemsQuery(id string, q storage.ItemQuery) (string, []any) {
	args := []any{id}
	var b strings.Builder
	b.WriteString(`select first_seen_ns, last_seen_ns, last_seq, idx, content, title_f, link_f, description_f from dynamo_items where resource_id = $1`)
	exact := true
	if len(q.Terms) > 0 {
		cond := ""
		for i, t := range q.Terms {
			col := "title_f"
			switch t.Field {
			case schema.FieldLink:
				col = "link_f"
			case schema.FieldDescription:
				col = "description_f"
			}
			term := "true"
			if v := fold(t.Value); utf8.ValidString(v) && !strings.ContainsRune(v, 0) {
				args = append(args, v)
				term = "strpos(" + col + ", $" + strconv.Itoa(len(args)) + ") > 0"
			} else {
				// PostgreSQL text cannot hold it, yet it may be a byte
				// substring of a field: leave it to MatchFolded.
				exact = false
			}
			switch {
			case i == 0:
				cond = term
			case t.Op == schema.Or:
				cond = "(" + cond + " or " + term + ")"
			default:
				cond = "(" + cond + " and " + term + ")"
			}
		}
		b.WriteString(" and " + cond)
	}
	b.WriteString(` order by first_seen_ns desc, first_seq desc, first_pos`)
	if q.Max > 0 && exact {
		b.WriteString(" limit " + strconv.Itoa(q.Max))
	}
	return b.String(), args
}

// PollState returns the poller's persisted state; ErrNotFound if none.
func (s *Store) PollState(ctx context.Context, id string) (_ []byte, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return nil, err
	}
	var (
		state  []byte
		isGone bool
	)
	err = s.pool.QueryRow(ctx, `select poll_state, gone from dynamo_resources where id = $1`, id).Scan(&state, &isGone)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && state == nil && !isGone:
		return nil, fmt.Errorf("poll state of %q: %w", id, storage.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("poll state of %q: %w", id, err)
	case isGone:
		return nil, gone(id)
	}
	return state, nil
}

// SavePollState replaces the poller's persisted state for a resource.
func (s *Store) SavePollState(ctx context.Context, id string, state []byte) (err error) {
	defer classifyErr(&err)
	if err := storage.ValidateID(id); err != nil {
		return fmt.Errorf("save poll state: %w", err)
	}
	if state == nil {
		state = []byte{} // NULL means none
	}
	tag, err := s.pool.Exec(ctx, `insert into dynamo_resources (id, poll_state) values ($1, $2)
		on conflict (id) do update set poll_state = excluded.poll_state where not dynamo_resources.gone`, id, state)
	if err != nil {
		return fmt.Errorf("save poll state of %q: %w", id, classify(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("save poll state: %w", gone(id))
	}
	return nil
}
