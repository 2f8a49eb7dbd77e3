package feed_test

import (
	"errors"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/feed"
)

// deepFeed is an RSS feed whose channel holds n elements nested one in
// the other, after one real item.
func deepFeed(n int) string {
	return `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><guid>g</guid><title>one</title></item>` +
		strings.Repeat("<a>", n) + strings.Repeat("</a>", n) + `</channel></rss>`
}

// A server nesting elements a million deep (7 MB, within the body limit)
// is refused before gofeed reads it, which would hold every open element
// at once: some 575 MB for this feed. Not parallel: TotalAlloc counts the
// whole process, so nothing else may run while it is measured.
func TestAFeedNestedTooDeepIsRefusedCheaply(t *testing.T) {
	ts := httptest.NewServer(&server{body: []byte(deepFeed(1_000_000)), contentType: "application/rss+xml"})
	t.Cleanup(ts.Close)
	c, err := feed.New(feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{url: ts.URL + "/feed?token=secret", c: c}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = b.failure()
	runtime.ReadMemStats(&after)
	// the body itself is 7 MB, read and held as a string a few times over
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading the feed allocated %d MB", alloc>>20)
	}
	var ce *connectors.Error
	if !errors.As(err, &ce) || ce.Class != connectors.Logic {
		t.Fatalf("got %v, want a Logic failure", err)
	}
	for _, want := range []string{ts.URL + "/feed?token=REDACTED", "nested more than 256 deep"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("got %q, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("got %q, which quotes the URL's secret", err)
	}
}

// A feed nested as deep as the bound allows is read as any other.
func TestAFeedNestedToTheBoundIsRead(t *testing.T) {
	t.Parallel()
	// rss and channel are two levels
	ts := httptest.NewServer(&server{body: []byte(deepFeed(connectors.MaxXMLDepth - 2)), contentType: "application/rss+xml"})
	t.Cleanup(ts.Close)
	c, err := feed.New(feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := (&bundle{url: ts.URL + "/feed", c: c}).items(t, nil)
	if len(got) != 1 || got[0].(map[string]any)["title"] != "one" {
		t.Fatalf("got %v, want the one item", got)
	}
}
