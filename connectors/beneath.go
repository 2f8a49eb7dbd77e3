package connectors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLinkOnTheWay is what OpenBeneath and OpenAt return when a part of the
// path is a symbolic link: the path was checked as a real path (no links
// in it), so a link there now was put there since, and following it could
// lead anywhere.
var ErrLinkOnTheWay = errors.New("a symbolic link appeared on the way since the path was checked")

// OpenBeneath opens the folder dir below root, both real paths (as
// RealPath gives them, and checked by the caller), walking from root one
// name at a time and following no symbolic link.
//
// Checking a path and then using it by name are two steps, and a folder on
// the way swapped for a link between them (by another workflow's move, or
// any program) would lead the use out of the roots or into keep's own
// files. Walked this way, the use reaches the folder the check saw, or
// fails with ErrLinkOnTheWay; what is then done inside it goes through the
// returned folder (OpenAt, renameat), never through a path again.
//
// With create, missing folders are made (0755), as os.MkdirAll would.
func OpenBeneath(root, dir string, create bool) (*os.File, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, &os.PathError{Op: "open", Path: dir, Err: errors.New("not below " + root)}
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	at := root
	if rel != "." {
		for _, name := range strings.Split(rel, string(filepath.Separator)) {
			next, err := openDirAt(fd, at, name, create)
			unix.Close(fd)
			if err != nil {
				return nil, err
			}
			fd, at = next, filepath.Join(at, name)
		}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

func openDirAt(fd int, at, name string, create bool) (int, error) {
	path := filepath.Join(at, name)
	for {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			return next, nil
		}
		if err == unix.ENOENT && create {
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && err != unix.EEXIST {
				return -1, &os.PathError{Op: "mkdir", Path: path, Err: err}
			}
			create = false // made now (or by someone else): open it, once
			continue
		}
		return -1, &os.PathError{Op: "open", Path: path, Err: linkOr(fd, name, err)}
	}
}

// OpenAt opens name in the folder dir (from OpenBeneath) without following
// a link there; flags are os.OpenFile's.
func OpenAt(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	fd := int(dir.Fd())
	f, err := unix.Openat(fd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir.Name(), name), Err: linkOr(fd, name, err)}
	}
	return os.NewFile(uintptr(f), filepath.Join(dir.Name(), name)), nil
}

// linkOr is ErrLinkOnTheWay when name in fd is a symbolic link (what
// O_NOFOLLOW refused, whichever errno it chose), else err.
func linkOr(fd int, name string, err error) error {
	if err != unix.ELOOP && err != unix.ENOTDIR && err != unix.EMLINK {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrLinkOnTheWay
	}
	return err
}
