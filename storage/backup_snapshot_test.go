package storage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshotCopiesWithoutChangingTheSource: the copy holds the rows, and
// the source's files are byte for byte what they were.
func TestSnapshotCopiesWithoutChangingTheSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "keep.db")
	db, err := Open(ctx, Opts{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.CreateWorkflow(ctx, "notes", time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, p := range []string{src, src + "-wal"} {
		before[p], _ = os.ReadFile(p)
	}
	dst := filepath.Join(dir, "copy.db")
	if err := db.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s changed during a snapshot", p)
		}
	}
	cp, err := Open(ctx, Opts{Path: dst})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	wfs, err := cp.Read().Workflows(ctx)
	if err != nil || len(wfs) != 1 || wfs[0].Name != "notes" {
		t.Fatalf("the copy holds %+v (%v)", wfs, err)
	}
	if err := db.Backup(ctx, dst); err == nil {
		t.Error("a snapshot over an existing file succeeded")
	}
}
