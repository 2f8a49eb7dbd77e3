package connectors

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenBeneath(t *testing.T) {
	t.Parallel()

	t.Run("it makes the missing folders with create, and only then", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		if _, err := OpenBeneath(root, filepath.Join(root, "a", "b"), false); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
		d, err := OpenBeneath(root, filepath.Join(root, "a", "b"), true)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		if fi, err := os.Stat(filepath.Join(root, "a", "b")); err != nil || !fi.IsDir() {
			t.Fatalf("%v %v", fi, err)
		}
	})

	t.Run("a link on the way is refused, wherever it leads", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		for _, create := range []bool{false, true} {
			if _, err := OpenBeneath(root, filepath.Join(root, "link", "x"), create); !errors.Is(err, ErrLinkOnTheWay) {
				t.Fatalf("create %v: got %v", create, err)
			}
		}
		d, err := OpenBeneath(root, filepath.Join(root, "real"), false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		f, err := OpenAt(d, "f", os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Symlink("f", filepath.Join(root, "real", "g")); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenAt(d, "g", os.O_RDONLY, 0); !errors.Is(err, ErrLinkOnTheWay) {
			t.Fatalf("OpenAt through a link: %v", err)
		}
	})

	t.Run("a folder not below the root is refused", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		if _, err := OpenBeneath(filepath.Join(root, "a"), root, false); err == nil {
			t.Fatal("opened the root's parent")
		}
	})
}
