package userpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RealPath follows symlinks in the longest existing prefix of abs and
// appends the rest unchanged: a file a mutation is about to create does not
// exist yet, but its folder may be a link. A link whose target does not
// exist is followed too: a write through it creates the target, so the
// target is where the path leads.
func RealPath(abs string) (string, error) { return realPath(abs, 0) }

// maxLinks bounds a chain of dangling links, as the kernel's ELOOP does.
const maxLinks = 40

func realPath(abs string, links int) (string, error) {
	rest := ""
	for cur := abs; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		// ENOTDIR: a file where a directory was expected; the walk treats it
		// like a missing part and the operation itself reports it.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if links >= maxLinks {
				return "", fmt.Errorf("%s: too many levels of symbolic links", abs)
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return realPath(filepath.Join(target, rest), links+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
