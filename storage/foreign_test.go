package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// CheckFile passes keep's own database, open or closed, and what keep may
// make one at (nothing, an empty file); it refuses other files, creating
// nothing beside any of them.
func TestCheckFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	keepDB := filepath.Join(dir, "keep.db")
	db, err := Open(ctx, Opts{Path: keepDB})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(ctx, keepDB); err != nil {
		t.Errorf("keep's database, open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(ctx, keepDB); err != nil {
		t.Errorf("keep's database, closed: %v", err)
	}
	if err := CheckFile(ctx, filepath.Join(dir, "nothing-here.db")); err != nil {
		t.Errorf("a path where nothing is: %v", err)
	}
	other := t.TempDir()
	empty := filepath.Join(other, "empty")
	text := filepath.Join(other, "text")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(ctx, empty); err != nil {
		t.Errorf("an empty file: %v", err)
	}
	var nk *NotKeepError
	if err := CheckFile(ctx, text); !errors.As(err, &nk) || nk.Path != text {
		t.Errorf("a text file: %v", err)
	}
	entries, _ := os.ReadDir(other)
	if len(entries) != 2 {
		t.Errorf("CheckFile made files: %v", entries)
	}
}
