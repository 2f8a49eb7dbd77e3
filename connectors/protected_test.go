package connectors_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
)

func TestProtected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "keep.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	// the data folder reached through a link: the entry is given one way,
	// the path asked about the other
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink(data, alias); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "copy.bin")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	p, err := connectors.NewProtected(connectors.ProtectedPath{Path: db, Prefix: true, Why: "keep's database"},
		connectors.ProtectedPath{Path: filepath.Join(dir, "config.toml"), Why: "keep's config"})
	if err != nil {
		t.Fatal(err)
	}
	refused := []string{db, db + "-wal", db + ".sock", filepath.Join(data, "KEEP.DB"), filepath.Join(alias, "keep.db-shm"),
		filepath.Join(data, "sub", "..", "keep.db"), hard, filepath.Join(dir, "config.toml")}
	for _, path := range refused {
		err := p.Check(path)
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Permission || !strings.Contains(err.Error(), path) {
			t.Errorf("Check(%s) = %v, want a permission error naming it", path, err)
		}
	}
	allowed := []string{filepath.Join(data, "notes.txt"), filepath.Join(dir, "keep.db"), filepath.Join(dir, "config.toml.bak"), data, dir}
	for _, path := range allowed {
		if err := p.Check(path); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", path, err)
		}
	}
	for _, path := range []string{data, dir, alias} {
		if err := p.CheckTree(path); err == nil {
			t.Errorf("CheckTree(%s) allowed a folder holding keep's database", path)
		}
	}
	if !p.Hides(db+"-wal") || p.Hides(filepath.Join(data, "notes.txt")) {
		t.Error("Hides must leave out keep's files and only them")
	}
	var none *connectors.Protected
	if none.Check(db) != nil || none.CheckTree(dir) != nil || none.Hides(db) {
		t.Error("a nil set protects nothing")
	}
}
