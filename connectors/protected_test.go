package connectors_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
)

// TestProtected: keep's own files are those in its places, whatever their
// names; the person's folders beside them stay theirs.
func TestProtected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "cfg")
	for _, d := range []string{data, filepath.Join(data, "demo"), filepath.Join(data, "keep.db.mcp"), cfg, filepath.Join(cfg, "root")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(data, "keep.db")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(db, "SQLite format 3\x00")
	cache := filepath.Join(data, "keep.db.mcp", "memory.tools.json")
	write(cache, "{}")
	write(filepath.Join(cfg, "service.env"), "KEEP_MAIL_PASSWORD=x\n")
	write(filepath.Join(data, "demo", "inbox.txt"), "demo")
	// the data folder reached through a link: the place is given one way,
	// the path asked about the other
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink(data, alias); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "copy.bin")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	hardCache := filepath.Join(dir, "tools.json")
	if err := os.Link(cache, hardCache); err != nil {
		t.Fatal(err)
	}
	linkToEnv := filepath.Join(dir, "env.txt")
	if err := os.Symlink(filepath.Join(cfg, "service.env"), linkToEnv); err != nil {
		t.Fatal(err)
	}
	// a dangling link: writing through it would create a file beside the
	// database
	dangling := filepath.Join(dir, "later.txt")
	if err := os.Symlink(filepath.Join(data, "keep.db.sock"), dangling); err != nil {
		t.Fatal(err)
	}
	p, err := connectors.NewProtected(connectors.Place{Dir: data, Own: "keep.db", Why: "beside keep's database"},
		connectors.Place{Dir: cfg, Why: "beside keep's config"})
	if err != nil {
		t.Fatal(err)
	}
	refused := []string{db, db + "-wal", db + ".sock", filepath.Join(data, "KEEP.DB"), filepath.Join(alias, "keep.db-shm"),
		filepath.Join(data, "sub", "..", "keep.db"), hard, hardCache, linkToEnv, dangling, cache, filepath.Join(data, "keep.db.feeds", "x"),
		filepath.Join(alias, "KEEP.DB.MCP", "memory.tools.json"), filepath.Join(data, "keep.log.1"), filepath.Join(data, "anything-new"),
		filepath.Join(cfg, "config.toml"), filepath.Join(cfg, "service.env"), filepath.Join(cfg, "credentials.json.lock")}
	for _, path := range refused {
		err := p.Check(path)
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Permission || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), "keep's own files") {
			t.Errorf("Check(%s) = %v, want a permission error naming it", path, err)
		}
	}
	allowed := []string{filepath.Join(data, "demo"), filepath.Join(data, "demo", "inbox.txt"), filepath.Join(alias, "demo", "new.txt"),
		filepath.Join(cfg, "root"), filepath.Join(cfg, "root", "notes.txt"), filepath.Join(dir, "keep.db"), data, cfg, dir}
	for _, path := range allowed {
		if err := p.Check(path); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", path, err)
		}
	}
	for _, path := range []string{data, dir, alias, cfg} {
		if err := p.CheckTree(path); err == nil {
			t.Errorf("CheckTree(%s) allowed a folder holding keep's files", path)
		}
	}
	if err := p.CheckTree(filepath.Join(data, "demo")); err != nil {
		t.Errorf("CheckTree(demo) = %v, want allowed: the demo's folder is the person's", err)
	}
	if !p.Hides(db+"-wal") || !p.Hides(filepath.Join(data, "keep.db.mcp")) || p.Hides(filepath.Join(data, "demo")) {
		t.Error("Hides must leave out keep's files and only them")
	}
	var none *connectors.Protected
	if none.Check(db) != nil || none.CheckTree(dir) != nil || none.Hides(db) {
		t.Error("a nil set protects nothing")
	}
}
