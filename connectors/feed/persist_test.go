package feed_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/feed"
)

// TestValidatorsSurviveARestart: a connector started afresh on the same Dir
// (a restarted keep) asks with the validators the last one got, and its
// 304 gives the items the last full answer held.
func TestValidatorsSurviveARestart(t *testing.T) {
	t.Parallel()
	s := &server{body: sample(t, "rss2.xml"), contentType: "application/rss+xml", etag: true, lastModified: true,
		modified: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	ts := httptest.NewServer(s)
	defer ts.Close()
	dir := t.TempDir()
	items := func() []any {
		t.Helper()
		c, err := feed.New(feed.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": ts.URL + "/rss2.xml"}})
		if err != nil {
			t.Fatal(err)
		}
		return got.([]any)
	}
	first := items()
	second := items()
	if s.count304() != 1 || s.lastRequest().Get("If-None-Match") != s.tag() {
		t.Fatalf("after a restart: %d 304s, last request %v", s.count304(), s.lastRequest())
	}
	if len(first) != 3 || !reflect.DeepEqual(first, second) {
		t.Fatalf("the 304 after a restart gave\n%v\nwant\n%v", second, first)
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if fi, _ := f.Info(); fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is mode %04o", f.Name(), fi.Mode().Perm())
		}
	}
}

// TestTheCacheKeepsWhatACallMayReturn: a feed's remembered items, in memory
// and on disk, are at most MaxItems, the most a call returns; a feed of
// twenty thousand items was kept whole for every URL.
func TestTheCacheKeepsWhatACallMayReturn(t *testing.T) {
	t.Parallel()
	s := &server{body: sample(t, "rss2.xml"), contentType: "application/rss+xml", etag: true}
	ts := httptest.NewServer(s)
	defer ts.Close()
	dir := t.TempDir()
	c, err := feed.New(feed.Config{Dir: dir, MaxItems: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a full answer, then a 304 from what was kept
		got, err := c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": ts.URL + "/rss2.xml"}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got.([]any)); n != 2 {
			t.Fatalf("%d items, want MaxItems (2)", n)
		}
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("%d files in the feed folder, want 1", len(files))
	}
	data, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	var saved struct{ Items []any }
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Items) != 2 {
		t.Fatalf("%d items kept on disk, want MaxItems (2)", len(saved.Items))
	}
}
