package badger

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
	"golang.org/x/sys/unix"
)

// FreeSpaceFunc reports the bytes available to unprivileged writers on the
// file system holding dir.
type FreeSpaceFunc func(dir string) (uint64, error)

// StatfsFree is the default [FreeSpaceFunc]: statfs(2)'s available blocks
// times the block size.
func StatfsFree(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil //nolint:gosec // Bsize is positive
}

// defaultSpaceInterval is how often free space is re-read in the background.
const defaultSpaceInterval = 10 * time.Second

// spaceGuard refuses writes while free space is below a minimum. Badger
// writes its value log and memtables through mmap, and a write into a
// mapping the file system cannot back kills the process with SIGBUS, so
// the only safe disk-full handling is not to write: every write checks
// first (one statfs, about a microsecond), and a background loop keeps
// [DB.Space] current and logs the transitions.
type spaceGuard struct {
	dir  string
	min  uint64
	free FreeSpaceFunc
	log  *slog.Logger

	mu     sync.Mutex // serialises checks so transitions are logged once
	low    atomic.Bool
	last   atomic.Uint64 // bytes free at the last check
	checks atomic.Uint64
}

// check reads the free space now and returns storage.ErrDiskFull (wrapped with the
// figures) when it is below the minimum. A failing statfs is not taken as
// a full disk: the write goes ahead, and the error is logged.
func (g *spaceGuard) check() error {
	if g == nil || g.min == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks.Add(1)
	n, err := g.free(g.dir)
	if err != nil {
		g.log.Warn("free space unknown", slog.String("dir", g.dir), slog.Any("error", err))
		return nil
	}
	g.last.Store(n)
	low := n < g.min
	if was := g.low.Swap(low); was != low {
		if low {
			g.log.Error("disk almost full: versions are not stored until space returns",
				slog.String("dir", g.dir), slog.Uint64("free_bytes", n), slog.Uint64("min_free_bytes", g.min))
		} else {
			g.log.Info("disk space back: storing versions again",
				slog.String("dir", g.dir), slog.Uint64("free_bytes", n), slog.Uint64("min_free_bytes", g.min))
		}
	}
	if low {
		return fmt.Errorf("%w: %d bytes free in %s, below storage.min_free (%d)", storage.ErrDiskFull, n, g.dir, g.min)
	}
	return nil
}

// run re-checks every interval until stop is closed.
func (g *spaceGuard) run(interval time.Duration, stop <-chan struct{}, done func()) {
	defer done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = g.check() // the result is kept in g; writers check again themselves
		}
	}
}

// Space says whether writes are refused for lack of space, and the free
// bytes at the last check (0 when the check is off or never ran).
type Space struct {
	Low     bool
	Free    uint64
	MinFree uint64
}

// Space reports the store's free-space state as of the last check.
func (db *DB) Space() Space {
	g := db.space
	if g == nil {
		return Space{}
	}
	return Space{Low: g.low.Load(), Free: g.last.Load(), MinFree: g.min}
}
