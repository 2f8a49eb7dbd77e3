//go:build linux

package lazyfs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// fileState is what a file holds that the disk does not: writes since its
// last sync, in order, and the size they give it.
type fileState struct {
	name    string // the file's name when first used, for Stats
	mu      sync.Mutex
	size    int64 // as the processes using the mount see it
	pending []extent
}

type extent struct {
	off  int64
	data []byte
}

func (f *fileState) write(off int64, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, extent{off: off, data: append([]byte(nil), data...)})
	f.size = max(f.size, off+int64(len(data)))
}

// read fills dest from the disk under fd, then lays the pending writes
// over it; it returns how many bytes the file has there.
func (f *fileState) read(fd int, dest []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= f.size {
		return 0, nil
	}
	n := int(min(int64(len(dest)), f.size-off))
	dest = dest[:n]
	got := 0
	for got < n {
		m, err := unix.Pread(fd, dest[got:], off+int64(got))
		if err != nil {
			return 0, err
		}
		if m == 0 {
			break
		}
		got += m
	}
	clear(dest[got:]) // beyond the disk's end: written, not synced, or a hole
	for _, e := range f.pending {
		lo, hi := max(off, e.off), min(off+int64(n), e.off+int64(len(e.data)))
		if lo < hi {
			copy(dest[lo-off:hi-off], e.data[lo-e.off:hi-e.off])
		}
	}
	return n, nil
}

// sync writes the pending writes to the disk under fd and syncs it.
func (f *fileState) sync(fd int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.pending {
		for w := 0; w < len(e.data); {
			m, err := unix.Pwrite(fd, e.data[w:], e.off+int64(w))
			if err != nil {
				return err
			}
			w += m
		}
	}
	f.pending = nil
	return unix.Fsync(fd)
}

// truncate reaches the disk at once (see the package comment); pending
// writes beyond the new end are cut off.
func (f *fileState) truncate(size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.pending[:0]
	for _, e := range f.pending {
		if e.off >= size {
			continue
		}
		if end := e.off + int64(len(e.data)); end > size {
			e.data = e.data[:size-e.off]
		}
		kept = append(kept, e)
	}
	f.pending = kept
	f.size = size
}

// grow records space allocated on the disk (fallocate).
func (f *fileState) grow(end int64) {
	f.mu.Lock()
	f.size = max(f.size, end)
	f.mu.Unlock()
}

func (f *fileState) getSize() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size
}

// drop forgets the pending writes and says how many bytes they held.
func (f *fileState) drop() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, e := range f.pending {
		n += int64(len(e.data))
	}
	f.pending = nil
	return n
}
