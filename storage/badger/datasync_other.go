//go:build !linux

package badger

import (
	"errors"
	"os"
)

// fdatasync flushes f: a full fsync where fdatasync is not available.
func fdatasync(f *os.File) error { return f.Sync() }

// openDirect: segments are written through the page cache and synced.
func openDirect(string) (*os.File, error) { return nil, errors.ErrUnsupported }

func alignedBlock(n int) []byte { return make([]byte, n) }
