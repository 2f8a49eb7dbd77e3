package feed_test

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"keep/connectors/feed"
)

// rss is an RSS 2.0 document of the given <item> bodies, newest first.
func rss(items ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Alerts</title><link>https://ci.example.com/</link><description>d</description>`)
	for _, it := range items {
		b.WriteString("<item>" + it + "</item>")
	}
	b.WriteString("</channel></rss>")
	return []byte(b.String())
}

// plain serves body with no validators, so every call parses the feed
// afresh: ids must come from the document, not from the 304 cache.
func plain(t *testing.T, body []byte) *bundle {
	t.Helper()
	s := &server{body: body, contentType: "application/rss+xml"}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, err := feed.New(feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{srv: s, url: ts.URL + "/feed.xml", c: c}
}

func ids(items []any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.(map[string]any)["id"].(string)
	}
	return out
}

func titles(items []any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.(map[string]any)["title"].(string) + "/" + it.(map[string]any)["summary"].(string)
	}
	return out
}

func distinct(t *testing.T, ids []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %q given to two items: %q", id, ids)
		}
		seen[id] = true
	}
}

// idOf is the id of the item whose title/summary is want.
func idOf(t *testing.T, items []any, want string) string {
	t.Helper()
	for i, s := range titles(items) {
		if s == want {
			return ids(items)[i]
		}
	}
	t.Fatalf("no item %q in %q", want, titles(items))
	return ""
}

func TestItemIDs(t *testing.T) {
	t.Parallel()

	t.Run("two entries with no guid, link or date and one title are two items, with the same ids when fetched again", func(t *testing.T) {
		t.Parallel()
		b := plain(t, rss(
			`<title>Build failed</title><description>job 2</description>`,
			`<title>Build failed</title><description>job 1</description>`))
		first := b.items(t, nil)
		if len(first) != 2 {
			t.Fatalf("got %d items: %q", len(first), titles(first))
		}
		distinct(t, ids(first))
		again := b.items(t, nil)
		if strings.Join(ids(again), " ") != strings.Join(ids(first), " ") {
			t.Fatalf("ids changed on an unchanged feed: %q, then %q", ids(first), ids(again))
		}
	})

	t.Run("the entry already taken keeps its id when one alike comes in above it", func(t *testing.T) {
		t.Parallel()
		// the id before entries were told apart (title and date hashed)
		// stays the lone entry's, so an upgrade brings nothing in twice
		b := plain(t, rss(`<title>Build failed</title><description>job 1</description>`))
		before := b.items(t, nil)
		if got := ids(before); len(got) != 1 || got[0] != hashID("Build failed", "") {
			t.Fatalf("a lone entry's id is %q, want %q", got, hashID("Build failed", ""))
		}
		b.srv.set(rss(
			`<title>Build failed</title><description>job 2</description>`,
			`<title>Build failed</title><description>job 1</description>`))
		after := b.items(t, nil)
		if idOf(t, after, "Build failed/job 1") != ids(before)[0] {
			t.Fatalf("job 1 changed id: %q, then %q", ids(before), ids(after))
		}
		distinct(t, ids(after))
	})

	t.Run("entries alike in everything and with no identity are each an item, numbered from the oldest", func(t *testing.T) {
		t.Parallel()
		alert := `<title>Disk full</title><description>on nas</description>`
		b := plain(t, rss(alert, alert))
		two := ids(b.items(t, nil))
		distinct(t, two)
		if len(two) != 2 {
			t.Fatalf("got %q, want two items", two)
		}
		b.srv.set(rss(alert, alert, alert))
		three := ids(b.items(t, nil))
		distinct(t, three)
		// the two taken are still there, under the same ids: one new item
		if len(three) != 3 || three[1] != two[0] || three[2] != two[1] {
			t.Fatalf("two alike entries had %q; with a third above them %q", two, three)
		}
	})

	t.Run("an entry edited in place keeps its guid as id", func(t *testing.T) {
		t.Parallel()
		b := plain(t, rss(
			`<guid>post-2</guid><title>Second</title><description>draft</description>`,
			`<guid>post-1</guid><title>First</title><description>hello</description>`))
		before := ids(b.items(t, nil))
		b.srv.set(rss(
			`<guid>post-2</guid><title>Second, retitled</title><description>final text</description>`,
			`<guid>post-1</guid><title>First</title><description>hello</description>`))
		after := ids(b.items(t, nil))
		if strings.Join(before, " ") != "post-2 post-1" || strings.Join(after, " ") != "post-2 post-1" {
			t.Fatalf("ids %q, after an edit %q", before, after)
		}
	})

	t.Run("entries sharing a guid are told apart, and the one there first keeps the guid", func(t *testing.T) {
		t.Parallel()
		// a generator that puts the blog's address in every guid
		b := plain(t, rss(`<guid>https://blog.example.com/</guid><title>Hello</title><pubDate>Mon, 02 Nov 2026 09:00:00 GMT</pubDate>`))
		before := ids(b.items(t, nil))
		b.srv.set(rss(
			`<guid>https://blog.example.com/</guid><title>Second post</title><pubDate>Tue, 03 Nov 2026 09:00:00 GMT</pubDate>`,
			`<guid>https://blog.example.com/</guid><title>Hello</title><pubDate>Mon, 02 Nov 2026 09:00:00 GMT</pubDate>`))
		after := b.items(t, nil)
		distinct(t, ids(after))
		if len(after) != 2 || before[0] != "https://blog.example.com/" || idOf(t, after, "Hello/") != before[0] {
			t.Fatalf("before %q, after %q", before, ids(after))
		}
		again := ids(b.items(t, nil))
		if strings.Join(again, " ") != strings.Join(ids(after), " ") {
			t.Fatalf("ids changed on an unchanged feed: %q, then %q", ids(after), again)
		}
	})

	t.Run("the oldest of entries sharing a guid keeps it whichever way the feed is ordered", func(t *testing.T) {
		t.Parallel()
		b := plain(t, rss(
			`<guid>g</guid><title>Old</title><pubDate>Mon, 02 Nov 2026 09:00:00 GMT</pubDate>`,
			`<guid>g</guid><title>New</title><pubDate>Tue, 03 Nov 2026 09:00:00 GMT</pubDate>`))
		got := b.items(t, nil)
		if idOf(t, got, "Old/") != "g" || idOf(t, got, "New/") == "g" {
			t.Fatalf("ids %q of %q", ids(got), titles(got))
		}
	})

	t.Run("one entry listed twice under its guid is one item", func(t *testing.T) {
		t.Parallel()
		post := `<guid>post-1</guid><title>First</title><description>hello</description>`
		b := plain(t, rss(post, post))
		if got := ids(b.items(t, nil)); strings.Join(got, " ") != "post-1" {
			t.Fatalf("got %q, want the one item post-1", got)
		}
	})

	t.Run("an entry's id does not depend on the limit asked", func(t *testing.T) {
		t.Parallel()
		b := plain(t, rss(
			`<title>Build failed</title><description>job 2</description>`,
			`<title>Build failed</title><description>job 1</description>`))
		all := ids(b.items(t, nil))
		one := ids(b.items(t, map[string]any{"limit": 1}))
		if len(one) != 1 || one[0] != all[0] {
			t.Fatalf("limit 1 gave %q, the whole feed %q", one, all)
		}
	})
}

// A feed of many alike entries with no identity (an alert feed gone
// wrong, or one written to wear keep down) is numbered in one pass: each
// entry's number once searched from the first was a search per entry, and
// the most entries keep reads minutes of CPU past the call's deadline.
func TestItemIDsOfManyAlikeEntries(t *testing.T) {
	t.Parallel()
	n := feed.MaxEntries
	alert := `<title>Disk full</title>`
	its := make([]string, n)
	for i := range its {
		its[i] = alert
	}
	b := plain(t, rss(its...))
	got := ids(b.items(t, nil))
	distinct(t, got)
	// numbered from the oldest, which keeps the bare key, and the feed
	// lists newest first: the first item shown has the last number
	last := "#" + strconv.Itoa(n-1)
	if want := hashID("Disk full", "") + "#"; !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], last) {
		t.Fatalf("the newest of %d alike entries is %q, want %s…%s", n, got[0], want, last)
	}
}
