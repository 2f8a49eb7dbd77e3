//go:build linux

package lazyfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// handle is an open regular file: data goes to and from its fileState;
// the backing file is written only when synced.
type handle struct {
	lf *fs.LoopbackFile
	st *fileState
	fs *FS
}

var (
	_ fs.FileReader    = (*handle)(nil)
	_ fs.FileWriter    = (*handle)(nil)
	_ fs.FileFsyncer   = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileGetattrer = (*handle)(nil)
	_ fs.FileSetattrer = (*handle)(nil)
	_ fs.FileAllocater = (*handle)(nil)
)

func (h *handle) fd() (int, syscall.Errno) {
	fd, ok := h.lf.PassthroughFd()
	if !ok {
		return 0, syscall.EBADF
	}
	return fd, 0
}

func (h *handle) Read(_ context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fd, errno := h.fd()
	if errno != 0 {
		return nil, errno
	}
	n, err := h.st.read(fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(_ context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.st.write(off, data)
	h.fs.count(1, 0)
	return uint32(len(data)), 0
}

// Fsync covers fsync and fdatasync alike: the file's data reaches the disk.
func (h *handle) Fsync(context.Context, uint32) syscall.Errno {
	fd, errno := h.fd()
	if errno != 0 {
		return errno
	}
	h.fs.count(0, 1)
	return fs.ToErrno(h.st.sync(fd))
}

// Flush is close(2): it syncs nothing.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return h.lf.Flush(ctx) }

func (h *handle) Release(ctx context.Context) syscall.Errno { return h.lf.Release(ctx) }

func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	if errno := h.lf.Getattr(ctx, out); errno != 0 {
		return errno
	}
	setSize(&out.Attr, h.st.getSize())
	return 0
}

func (h *handle) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := h.lf.Setattr(ctx, in, out); errno != 0 {
		return errno
	}
	if sz, ok := in.GetSize(); ok {
		h.st.truncate(int64(sz))
	}
	setSize(&out.Attr, h.st.getSize())
	return 0
}

func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if errno := h.lf.Allocate(ctx, off, size, mode); errno != 0 {
		return errno
	}
	if mode&0x01 == 0 { // FALLOC_FL_KEEP_SIZE not set: the file grows
		h.st.grow(int64(off + size))
	}
	return 0
}
