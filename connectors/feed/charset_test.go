package feed_test

import (
	"net/http/httptest"
	"testing"

	"keep/connectors/feed"
)

// A feed may name its character set only in its Content-Type, which
// outranks the XML declaration (RFC 7303 §3.2): read as UTF-8, such a
// feed failed every poll as "not an RSS, Atom or JSON feed".
func TestAFeedInTheCharsetItsContentTypeNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, contentType, body string }{
		{"no encoding declared", "application/rss+xml; charset=windows-1252",
			"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title><item><guid>a</guid><title>Caf\xe9 \x93ouvert\x94</title></item></channel></rss>"},
		{"the declaration says otherwise", "text/xml; charset=\"ISO-8859-1\"",
			"<?xml version='1.0' encoding='UTF-8'?><rss version=\"2.0\"><channel><title>t</title><item><guid>a</guid><title>Caf\xe9 \x93ouvert\x94</title></item></channel></rss>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(&server{body: []byte(tc.body), contentType: tc.contentType})
			t.Cleanup(ts.Close)
			c, err := feed.New(feed.Config{})
			if err != nil {
				t.Fatal(err)
			}
			got := (&bundle{url: ts.URL + "/feed", c: c}).items(t, nil)
			// ISO-8859-1 is read as windows-1252, as browsers read it
			// (the WHATWG Encoding Standard)
			want := "Café \u201couvert\u201d"
			if len(got) != 1 || got[0].(map[string]any)["title"] != want {
				t.Fatalf("got %q, want one item titled %q", got, want)
			}
		})
	}
}
