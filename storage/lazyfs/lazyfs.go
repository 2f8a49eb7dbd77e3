//go:build linux

// Package lazyfs is a FUSE file system for power-cut tests, after LazyFS:
// it passes a folder through, but keeps what is written in memory until the
// file is synced, and a simulated power cut (Cut) drops everything not
// synced yet. Tests run keep's data directory on it to check that what keep
// says is on disk survives a cut, not only a kill.
//
// Only file data is held back: creating, renaming, removing and truncating
// files reach the folder at once. That is kinder than a real disk (a new
// file's name can be lost with its directory unsynced), and keeps the model
// small; what keep relies on, the order and durability of writes to its
// database and log, is what it checks.
package lazyfs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is one mount of a folder with writes held back until synced.
type FS struct {
	backing string
	mnt     string
	server  *fuse.Server

	mu    sync.Mutex
	files map[uint64]*fileState // by the backing file's inode number
	stats Stats
}

// Stats counts what the file system saw, so a test can say its cuts landed
// on unsynced data.
type Stats struct {
	Writes  int   // write requests
	Syncs   int   // fsync/fdatasync requests
	Dropped int64 // bytes dropped by cuts
	Cuts    int
	// DroppedIn: bytes dropped by cuts, by file name
	DroppedIn map[string]int64
}

// Mount serves backing at mnt (both folders must exist). It needs
// /dev/fuse and the right to mount (root, or fusermount3).
func Mount(backing, mnt string) (*FS, error) {
	l := &FS{backing: backing, mnt: mnt, files: map[uint64]*fileState{}}
	if err := l.mount(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *FS) mount() error {
	root := &fs.LoopbackRoot{Path: l.backing}
	var st syscall.Stat_t
	if err := syscall.Stat(l.backing, &st); err != nil {
		return err
	}
	root.Dev = uint64(st.Dev)
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, fs: l}
	}
	rootNode := root.NewNode(root, nil, "", &st)
	root.RootNode = rootNode
	zero := time.Duration(0)
	opts := &fs.Options{
		// Sizes change under the kernel's feet at a cut: no caching of
		// names or attributes.
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			FsName:      "lazyfs",
			Name:        "lazyfs",
			DirectMount: os.Geteuid() == 0,
			// SQLite's shared memory and the data directory's socket need
			// every process to see the same files
			AllowOther: os.Geteuid() == 0,
		},
	}
	server, err := fs.Mount(l.mnt, rootNode, opts)
	if err != nil {
		return fmt.Errorf("lazyfs: mount %s: %w", l.mnt, err)
	}
	l.server = server
	return nil
}

// Cut simulates a power cut: the mount goes away (every process using it
// must be dead by now, as they would be), everything written and not
// synced is dropped, and the folder is mounted again as a machine would
// find its disk when it boots.
func (l *FS) Cut() error {
	if err := l.unmount(); err != nil {
		return err
	}
	l.mu.Lock()
	l.dropAll()
	l.stats.Cuts++
	l.mu.Unlock()
	return l.mount()
}

// Close unmounts for good; what was not synced is dropped, as at a cut.
func (l *FS) Close() error {
	if err := l.unmount(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropAll()
	return nil
}

// dropAll forgets every file's held-back writes; the caller holds l.mu.
func (l *FS) dropAll() {
	if l.stats.DroppedIn == nil {
		l.stats.DroppedIn = map[string]int64{}
	}
	for ino, f := range l.files {
		if n := f.drop(); n > 0 {
			l.stats.Dropped += n
			l.stats.DroppedIn[f.name] += n
		}
		delete(l.files, ino)
	}
}

func (l *FS) unmount() error {
	var err error
	// a process just killed may still hold the mount for a moment
	for i := 0; i < 40; i++ {
		if err = l.server.Unmount(); err == nil {
			l.server.Wait()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Leave no mount behind that would hang the next user of the folder.
	_ = syscall.Unmount(l.mnt, syscall.MNT_DETACH)
	return fmt.Errorf("lazyfs: unmount %s (detached it): %w", l.mnt, err)
}

// Stats returns the counts so far.
func (l *FS) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.DroppedIn = maps.Clone(l.stats.DroppedIn)
	return s
}

// state returns the held-back state of the backing file at path, made on
// first use from the file's size on disk.
func (l *FS) state(path string) (*fileState, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.files[st.Ino]
	if f == nil {
		f = &fileState{name: filepath.Base(path), size: st.Size}
		l.files[st.Ino] = f
	}
	return f, nil
}

// heldSize is the size of the backing file at path as the mount shows it,
// if it has held-back state.
func (l *FS) heldSize(path string) (int64, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0, false
	}
	l.mu.Lock()
	f := l.files[st.Ino]
	l.mu.Unlock()
	if f == nil {
		return 0, false
	}
	return f.getSize(), true
}

// forget drops the state of a backing file about to be removed (or
// replaced by a rename): its inode number may be reused by a new file.
func (l *FS) forget(path string) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return
	}
	l.mu.Lock()
	delete(l.files, st.Ino)
	l.mu.Unlock()
}

func (l *FS) count(writes, syncs int) {
	l.mu.Lock()
	l.stats.Writes += writes
	l.stats.Syncs += syncs
	l.mu.Unlock()
}
