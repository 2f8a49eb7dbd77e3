package feed_test

import (
	"context"
	"net/http/httptest"
	"os"
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
