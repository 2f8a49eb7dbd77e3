//go:build linux

package lazyfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node whose regular files answer from their held-back
// state: sizes, reads and writes go through fileState, so every process
// sees what was written, synced or not.
type node struct {
	fs.LoopbackNode
	fs *FS
}

var (
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
)

// backing is the node's path in the backing folder.
func (n *node) backing() string {
	return filepath.Join(n.fs.backing, n.Path(n.Root()))
}

func (n *node) regular() bool { return n.StableAttr().Mode&syscall.S_IFMT == syscall.S_IFREG }

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.regular() {
		return n.LoopbackNode.Open(ctx, flags)
	}
	return n.open(n.backing(), flags&syscall.O_TRUNC != 0)
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	p := filepath.Join(n.backing(), name)
	n.fs.forget(p) // a file made anew: no state of an old one with its inode number
	ch, fh, _, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return ch, fh, 0, errno
	}
	fh.(fs.FileReleaser).Release(ctx)
	h, _, errno := n.open(p, flags&syscall.O_TRUNC != 0)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	out.Size = uint64(h.(*handle).st.getSize())
	return ch, h, 0, 0
}

// open opens the backing file for reading and writing whatever the caller
// asked: a sync may have to write what a read-only descriptor syncs.
func (n *node) open(p string, trunc bool) (fs.FileHandle, uint32, syscall.Errno) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	st, err := n.fs.state(p)
	if err != nil {
		f.Close()
		return nil, 0, fs.ToErrno(err)
	}
	if trunc {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, 0, fs.ToErrno(err)
		}
		st.truncate(0)
	}
	return &handle{lf: fs.NewLoopbackFileFromOS(f), st: st, fs: n.fs}, 0, 0
}

// size is the file's size as the mount shows it, if it has held-back state.
func (n *node) size() (int64, bool) {
	if !n.regular() {
		return 0, false
	}
	st, err := n.fs.state(n.backing())
	if err != nil {
		return 0, false
	}
	return st.getSize(), true
}

// Lookup answers with the attributes of the file as the mount shows it: the
// kernel takes the size from them, and a size short of what was written
// would cut off the writes it has yet to hand over (a shared mapping's).
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno != 0 || out.Attr.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return ch, errno
	}
	if sz, ok := n.fs.heldSize(filepath.Join(n.backing(), name)); ok {
		setSize(&out.Attr, sz)
	}
	return ch, 0
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := f.(*handle); ok {
		return h.Getattr(ctx, out)
	}
	if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	if sz, ok := n.size(); ok {
		setSize(&out.Attr, sz)
	}
	return 0
}

func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags, mask uint32, out *fuse.StatxOut) syscall.Errno {
	var lf fs.FileHandle
	if h, ok := f.(*handle); ok {
		lf = h.lf
	}
	if errno := n.LoopbackNode.Statx(ctx, lf, flags, mask, out); errno != 0 {
		return errno
	}
	if sz, ok := n.size(); ok {
		out.Size = uint64(sz)
		out.Blocks = uint64((sz + 511) / 512)
	}
	return 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	var lf fs.FileHandle
	if h, ok := f.(*handle); ok {
		lf = h.lf
	}
	if errno := n.LoopbackNode.Setattr(ctx, lf, in, out); errno != 0 {
		return errno
	}
	if !n.regular() {
		return 0
	}
	st, err := n.fs.state(n.backing())
	if err != nil {
		return fs.ToErrno(err)
	}
	if sz, ok := in.GetSize(); ok {
		st.truncate(int64(sz))
	}
	setSize(&out.Attr, st.getSize())
	return 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	n.fs.forget(filepath.Join(n.backing(), name))
	return n.LoopbackNode.Unlink(ctx, name)
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if np, ok := newParent.(*node); ok {
		n.fs.forget(filepath.Join(np.backing(), newName))
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

// CopyFileRange would copy on the disk around the held-back state.
func (n *node) CopyFileRange(context.Context, fs.FileHandle, uint64, *fs.Inode, fs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

func setSize(a *fuse.Attr, sz int64) {
	a.Size = uint64(sz)
	a.Blocks = uint64((sz + 511) / 512)
}
