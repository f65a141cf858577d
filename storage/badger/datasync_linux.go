package badger

import (
	"os"
	"syscall"
	"unsafe"
)

// fdatasync flushes f's data (and only the metadata needed to read it back).
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// openDirect opens path for writes that bypass the page cache and return
// once on disk (O_DIRECT|O_DSYNC); it fails where the file system has no
// O_DIRECT (tmpfs), and the caller then syncs with fdatasync.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT|syscall.O_DSYNC, 0)
}

// alignedBlock returns n bytes (a multiple of journalBlock) starting at a
// journalBlock boundary in memory, as O_DIRECT requires.
func alignedBlock(n int) []byte {
	b := make([]byte, n+journalBlock)
	skip := (journalBlock - int(uintptr(unsafe.Pointer(&b[0]))%journalBlock)) % journalBlock
	return b[skip : skip+n]
}
