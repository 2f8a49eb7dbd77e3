//go:build linux

package lazyfs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSharedMapping is what SQLite does with a WAL database's -shm file:
// shrink it, grow it by writing a byte at the end of each page, map it
// shared, and read and write the mapping from two descriptors.
func TestSharedMapping(t *testing.T) {
	_, _, mnt := mountForTest(t)
	if ans := inChild(t, "mapping", filepath.Join(mnt, "x-shm")); ans != "ok" {
		t.Fatalf("the mapping child says %q", ans)
	}
}

func init() { children["mapping"] = sharedMapping }

// sharedMapping is the child of TestSharedMapping: it maps the file at p.
func sharedMapping(p string) (string, error) {
	open := func() (*os.File, error) { return os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600) }
	f, err := open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Truncate(3); err != nil {
		return "", err
	}
	for off := int64(4095); off < 32768; off += 4096 {
		if _, err := f.WriteAt([]byte{0}, off); err != nil {
			return "", err
		}
	}
	m, err := unix.Mmap(int(f.Fd()), 0, 32768, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return "", err
	}
	defer unix.Munmap(m)
	for i := 0; i < 32768; i += 512 {
		m[i] = byte(i / 512)
	}
	g, err := open()
	if err != nil {
		return "", err
	}
	defer g.Close()
	st, err := g.Stat()
	if err != nil || st.Size() != 32768 {
		return "", fmt.Errorf("stat: %v %v", st.Size(), err)
	}
	m2, err := unix.Mmap(int(g.Fd()), 0, 32768, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return "", err
	}
	defer unix.Munmap(m2)
	for i := 0; i < 32768; i += 512 {
		if m2[i] != byte(i/512) {
			return "", fmt.Errorf("second mapping at %d: %d", i, m2[i])
		}
	}
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		return "", err
	}
	for round := 0; round < 50; round++ {
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		for i := 0; i < 32768; i += 512 {
			m[i]++
			_ = m2[i]
		}
	}
	return "ok", nil
}
