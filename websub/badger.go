package websub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// BadgerStore is a [Store] in its own Badger database (a directory of its
// own, not the versions store: cmd opens it at storage.path/websub, as
// storage keeps its poll states at storage.path/pollstate), so that subscriptions and pending
// deliveries survive restarts. Safe for concurrent use; Close it.
//
// Key layout: 's' | resource | 0x00 | topic | 0x00 | callback, value the
// JSON of the [Subscription]. Resource ids and URLs never contain 0x00
// (ids are validated by config, and URLs with control characters do not
// parse), and the resource leads so that a resource's subscriptions are one
// prefix scan. Values are small and stay in the LSM tree, so no value-log
// GC is needed. Writes are not synced one by one: they survive a crash of
// the process (Badger writes through mmap); an OS crash may lose the last
// seconds of subscription changes.
type BadgerStore struct {
	db *badger.DB
}

var _ Store = (*BadgerStore)(nil)

const prefixSub = 's'

// OpenBadgerStore opens (creating if needed) the store in dir. log receives
// Badger's messages (nil: discarded).
func OpenBadgerStore(dir string, log *slog.Logger) (*BadgerStore, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(badgerLogger{log}).
		WithSyncWrites(false).
		WithMemTableSize(4 << 20).
		WithValueThreshold(64 << 10). // below what a 4 MiB memtable accepts
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(1 << 20).
		WithNumCompactors(2).
		WithMetricsEnabled(false)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("websub: open store %s: %w", dir, err)
	}
	return &BadgerStore{db: db}, nil
}

// Close closes the database.
func (b *BadgerStore) Close() error {
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("websub: close store: %w", err)
	}
	return nil
}

func subKey(k Key) []byte {
	out := make([]byte, 0, 3+len(k.Resource)+len(k.Topic)+len(k.Callback))
	out = append(out, prefixSub)
	out = append(out, k.Resource...)
	out = append(out, 0)
	out = append(out, k.Topic...)
	out = append(out, 0)
	return append(out, k.Callback...)
}

func checkKey(k Key) error {
	if strings.ContainsRune(k.Resource, 0) || strings.ContainsRune(k.Topic, 0) || strings.ContainsRune(k.Callback, 0) {
		return errors.New("websub: key contains NUL")
	}
	return nil
}

func decodeSub(item *badger.Item) (Subscription, error) {
	var s Subscription
	err := item.Value(func(v []byte) error { return json.Unmarshal(v, &s) })
	if err != nil {
		return Subscription{}, fmt.Errorf("decode subscription %q: %w", item.Key(), err)
	}
	return s, nil
}

// Subscription implements [Store].
func (b *BadgerStore) Subscription(ctx context.Context, k Key) (Subscription, error) {
	if err := ctx.Err(); err != nil {
		return Subscription{}, err
	}
	if err := checkKey(k); err != nil {
		return Subscription{}, err
	}
	var s Subscription
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(subKey(k))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("read subscription: %w", err)
		}
		s, err = decodeSub(item)
		return err
	})
	return s, err
}

// Subscriptions implements [Store]; the result is sorted by key.
func (b *BadgerStore) Subscriptions(ctx context.Context, resource string, all bool) ([]Subscription, error) {
	prefix := []byte{prefixSub}
	if !all {
		prefix = append(append(prefix, resource...), 0)
	}
	var out []Subscription
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			s, err := decodeSub(it.Item())
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	return out, nil
}

// Update implements [Store]: one transaction, retried on conflict.
func (b *BadgerStore) Update(ctx context.Context, k Key, fn func(cur *Subscription) (*Subscription, error)) error {
	if err := checkKey(k); err != nil {
		return err
	}
	key := subKey(k)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := b.db.Update(func(txn *badger.Txn) error {
			var cur *Subscription
			item, err := txn.Get(key)
			switch {
			case err == nil:
				s, err := decodeSub(item)
				if err != nil {
					return err
				}
				cur = &s
			case !errors.Is(err, badger.ErrKeyNotFound):
				return fmt.Errorf("read subscription: %w", err)
			}
			next, err := fn(cur)
			if err != nil {
				return err
			}
			if next == nil {
				if cur == nil {
					return nil
				}
				return txn.Delete(key)
			}
			n := *next
			n.Key = k
			v, err := json.Marshal(n)
			if err != nil {
				return fmt.Errorf("encode subscription: %w", err)
			}
			if cur != nil {
				if old, err := item.ValueCopy(nil); err == nil && bytes.Equal(old, v) {
					return nil // unchanged
				}
			}
			return txn.Set(key, v)
		})
		if errors.Is(err, badger.ErrConflict) {
			continue
		}
		return err
	}
}

// badgerLogger sends Badger's messages to slog; its chatter is debug.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) logf(level slog.Level, format string, args ...any) {
	ctx := context.Background() // badger passes no context
	if l.log.Enabled(ctx, level) {
		l.log.LogAttrs(ctx, level, "websub store: badger", slog.String("detail", strings.TrimSpace(fmt.Sprintf(format, args...))))
	}
}

func (l badgerLogger) Errorf(f string, a ...any)   { l.logf(slog.LevelError, f, a...) }
func (l badgerLogger) Warningf(f string, a ...any) { l.logf(slog.LevelWarn, f, a...) }
func (l badgerLogger) Infof(f string, a ...any)    { l.logf(slog.LevelDebug, f, a...) }
func (l badgerLogger) Debugf(f string, a ...any)   { l.logf(slog.LevelDebug, f, a...) }
