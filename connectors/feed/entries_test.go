package feed_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/feed"
)

// A feed listing more entries than any feed keeps (a few bytes each fit
// ten megabytes by the million) is refused before it is parsed: parsing
// holds every entry at once, some 1.7 GB for 10 MiB of <item/>.
func TestAFeedOfTooManyEntriesIsRefused(t *testing.T) {
	t.Parallel()
	n := feed.MaxEntries + 1
	for _, tc := range []struct{ name, body string }{
		{"rss", `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>` + strings.Repeat("<item/>", n) + `</channel></rss>`},
		{"atom with a prefix", `<?xml version="1.0"?><a:feed xmlns:a="http://www.w3.org/2005/Atom"><a:title>t</a:title>` + strings.Repeat("<a:entry></a:entry>", n) + `</a:feed>`},
		{"json feed", `{"version":"https://jsonfeed.org/version/1.1","title":"t","items":[{}` + strings.Repeat(",{}", n-1) + `]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(&server{body: []byte(tc.body), contentType: "application/xml"})
			t.Cleanup(ts.Close)
			c, err := feed.New(feed.Config{})
			if err != nil {
				t.Fatal(err)
			}
			b := &bundle{url: ts.URL + "/feed", c: c}
			err = b.failure()
			var ce *connectors.Error
			if !errors.As(err, &ce) || ce.Class != connectors.Logic || !strings.Contains(err.Error(), "entries") {
				t.Fatalf("got %v, want a Logic failure naming the entries", err)
			}
		})
	}
}

// The count is a bound, not a parse: a tag shown in an entry's CDATA
// counts too, and a feed within the bound so counted is read as any other.
func TestAFeedOfManyEntriesIsRead(t *testing.T) {
	t.Parallel()
	body := `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>` +
		strings.Repeat("<item><description>x &lt;item&gt; <![CDATA[<item>]]></description></item>", feed.MaxEntries/2) + `</channel></rss>`
	ts := httptest.NewServer(&server{body: []byte(body), contentType: "application/rss+xml"})
	t.Cleanup(ts.Close)
	c, err := feed.New(feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := (&bundle{url: ts.URL + "/feed", c: c}).items(t, nil); len(got) != feed.DefaultMaxItems {
		t.Fatalf("got %d items, want %d", len(got), feed.DefaultMaxItems)
	}
}
