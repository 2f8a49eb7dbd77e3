package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rescanSetup: the files→http workflow's producer alone over a folder of n
// files it has already scanned once.
func rescanSetup(tb testing.TB, n int) *keepEngine {
	ctx := context.Background()
	k, err := newEngine(ctx, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { k.close() })
	inbox := filepath.Join(k.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("item-%05d.json", i)), []byte("{}"), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	src := strings.ReplaceAll(filesPostWorkflow, "SINK", "http://127.0.0.1:1")
	src = src[:strings.Index(src, "  consumers:")] + "});\n" // the producer only
	if err := k.deploy(ctx, "filespost", src); err != nil {
		tb.Fatal(err)
	}
	if err := k.e.Drain(ctx); err != nil {
		tb.Fatal(err)
	}
	return k
}

func rescan(tb testing.TB, k *keepEngine) {
	ctx := context.Background()
	if err := k.e.RunNow(ctx, "filespost"); err != nil {
		tb.Fatal(err)
	}
	if err := k.e.Drain(ctx); err != nil {
		tb.Fatal(err)
	}
}

// TestRescanPages: scanning a folder of 1,000 files already known writes a
// handful of pages, not its 1,000 inputs and events again (before: 32 WAL
// pages, the events' rows rewritten to bump updated_at; now 12).
func TestRescanPages(t *testing.T) {
	k := rescanSetup(t, 1000)
	for i := range 3 {
		before, err := readWAL(k.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		rescan(t, k)
		after, err := readWAL(k.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if after.salt != before.salt {
			t.Fatal("the WAL was restarted during the rescan; its pages cannot be counted")
		}
		if pages := after.frames - before.frames; pages > 20 {
			t.Errorf("rescan %d of 1,000 known files wrote %d WAL pages, want at most 20", i, pages)
		}
	}
	db, err := sql.Open("sqlite", "file:"+k.path+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var inputs, events int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM inputs), (SELECT count(*) FROM events)`).Scan(&inputs, &events); err != nil {
		t.Fatal(err)
	}
	if inputs != 1000 || events != 1000 {
		t.Errorf("%d inputs and %d events after the rescans, want 1000 and 1000", inputs, events)
	}
}

// BenchmarkRescan: one scan of a folder of 1,000 known files.
func BenchmarkRescan(b *testing.B) {
	k := rescanSetup(b, 1000)
	cpu := cpuSeconds()
	n := 0
	for b.Loop() {
		rescan(b, k)
		n++
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(n), "cpu-s/scan")
}
