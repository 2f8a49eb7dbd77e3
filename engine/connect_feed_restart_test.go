package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"keep/engine/config"
	"keep/storage"
)

// TestFeedValidatorsSurviveARestart: the ETag a feed answered before keep
// restarted is sent after it, so the unchanged feed answers 304, and the
// workflow still sees its items (no new inputs, no failure).
func TestFeedValidatorsSurviveARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var full, notModified atomic.Int32
	const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>` +
		`<item><guid>a</guid><title>A</title></item><item><guid>b</guid><title>B</title></item></channel></rss>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Content-Type", "application/rss+xml")
		w.Write([]byte(rss))
	}))
	defer srv.Close()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "keep.db")
	cfg := config.Default()
	cfg.Path = filepath.Join(dir, "config.toml")
	cfg.Connectors.Files.Roots = []string{dir}
	src := `export default Keep.workflow({ name: "news", topics: { t: {} },
  producers: { look: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const items = await ctx.feed.items({ url: "` + srv.URL + `/feed.xml" });
    if (items.length !== 2) throw new Error("got " + items.length + " items");
    for (const it of items) ctx.registerInput({ source: "feed", type: "item", id: it.id, title: it.title });
  } } }, consumers: {} });`

	start := func() (*Engine, func()) {
		t.Helper()
		db, err := storage.Open(ctx, storage.Opts{Path: dbPath})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := Connectors(cfg, ConnectorOpts{DBPath: dbPath})
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(cfg.Policy)})
		if err != nil {
			t.Fatal(err)
		}
		return e, func() { db.Close() }
	}
	e, stop := start()
	if _, err := e.Deploy(ctx, "news.js", []byte(src), ""); err != nil {
		t.Fatal(err)
	}
	if err := e.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	stop()

	e, stop = start()
	defer stop()
	if err := e.RunNow(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	if err := e.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if full.Load() != 1 || notModified.Load() != 1 {
		t.Fatalf("%d full answers and %d 304s; want the restarted keep to ask with the ETag", full.Load(), notModified.Load())
	}
	w, err := e.Workflow(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	if w.Block != nil || w.LastRun == nil || w.LastRun.Error != "" || w.Counts.InputsPending+w.Counts.InputsDone != 2 {
		t.Fatalf("after the restart: block %+v, last run %+v, counts %+v", w.Block, w.LastRun, w.Counts)
	}
}
