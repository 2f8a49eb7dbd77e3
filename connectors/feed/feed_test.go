package feed_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/feed"
	khttp "keep/connectors/http"
)

// server serves one feed document the way real feed hosts do: with a
// content type, and, as configured, an ETag and a Last-Modified it honours
// in conditional requests.
type server struct {
	mu           sync.Mutex
	body         []byte
	contentType  string
	etag         bool
	lastModified bool
	modified     time.Time
	requests     []http.Header
	notModified  int
	status       int // when set, answered instead of the feed
}

func (s *server) set(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body = body
	s.modified = s.modified.Add(time.Hour)
}

func (s *server) tag() string {
	sum := sha256.Sum256(s.body)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Header.Clone())
	if s.status != 0 {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(s.status)
		return
	}
	if s.etag {
		w.Header().Set("ETag", s.tag())
	}
	if s.lastModified {
		w.Header().Set("Last-Modified", s.modified.UTC().Format(http.TimeFormat))
	}
	fresh := false
	switch {
	case s.etag && r.Header.Get("If-None-Match") != "":
		fresh = r.Header.Get("If-None-Match") == s.tag()
	case s.lastModified && r.Header.Get("If-Modified-Since") != "":
		t, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
		fresh = err == nil && !s.modified.Truncate(time.Second).After(t)
	}
	if fresh {
		s.notModified++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", s.contentType)
	w.Write(s.body)
}

func (s *server) lastRequest() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

func (s *server) count304() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notModified
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type bundle struct {
	srv *server
	url string
	c   *feed.Connector
}

func setup(t *testing.T, file, contentType string) *bundle {
	t.Helper()
	s := &server{body: sample(t, file), contentType: contentType, etag: true, lastModified: true,
		modified: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, err := feed.New(feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{srv: s, url: ts.URL + "/" + file, c: c}
}

func (b *bundle) items(t *testing.T, params map[string]any) []any {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["url"] = b.url
	got, err := b.c.Do(context.Background(), connectors.Call{Method: "items", Params: params})
	if err != nil {
		t.Fatalf("items: %v", err)
	}
	return got.([]any)
}

// failure is the error of an items call that must fail.
func (b *bundle) failure() error {
	_, err := b.c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": b.url}})
	return err
}

func hashID(title, date string) string {
	sum := sha256.Sum256([]byte(title + "\x00" + date))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

func TestItemsOfEachFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, contentType string
		want              []map[string]any
	}{
		{"rss2.xml", "application/rss+xml; charset=utf-8", []map[string]any{
			{"id": "tag:go.dev,2026:blog/go1.26", "title": "Go 1.26 is released", "url": "https://go.dev/blog/go1.26",
				"published": "2026-11-17T16:00:00Z",
				"summary":   `<p>Today the Go team is happy to release Go 1.26. You can get it from the <a href="https://go.dev/dl/">download page</a>.</p>`},
			{"id": "https://go.dev/blog/range-functions", "title": "Range over function types", "url": "https://go.dev/blog/range-functions",
				"published": "2026-11-02T14:30:00Z", "summary": "An introduction to iterators &amp; the new range form."},
			{"id": hashID("Gopher office hours moved", "Fri, 30 Oct 2026 12:00:00 GMT"), "title": "Gopher office hours moved", "url": nil,
				"published": "2026-10-30T12:00:00Z", "summary": "This week's office hours are on Thursday."},
		}},
		{"atom.xml", "application/atom+xml", []map[string]any{
			{"id": "https://jvns.ca/blog/2026/11/20/dns-ttls/", "title": "Some notes on DNS TTLs", "url": "https://jvns.ca/blog/2026/11/20/dns-ttls/",
				"published": "2026-11-20T08:15:00Z", "summary": "<p>Why does my DNS change take so long?</p>"},
			{"id": "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", "title": "A few git tips", "url": "https://jvns.ca/blog/2026/11/01/git-tips/",
				"published": "2026-11-02T00:20:00Z", "summary": "<p>Rebasing, reflog and friends.</p>"},
		}},
		{"feed.json", "application/feed+json", []map[string]any{
			{"id": "http://manton.micro.blog/2026/11/21/093000.html", "title": "Micro.blog turns ten", "url": "https://www.manton.org/2026/11/21/093000.html",
				"published": "2026-11-21T15:30:00Z", "summary": "Ten years of Micro.blog."},
			{"id": "3f1c8a", "title": "", "url": "https://www.manton.org/2026/11/19/short-note.html",
				"published": "2026-11-19T22:05:12Z", "summary": "A short note without a title, as microblogs have."},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file+" gives its items with stable ids", func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.file, tc.contentType)
			got := b.items(t, nil)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d items, want %d: %v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !reflect.DeepEqual(got[i], w) {
					t.Errorf("item %d:\n got %v\nwant %v", i, got[i], w)
				}
			}
		})
	}
}

func TestConditionalGet(t *testing.T) {
	t.Parallel()

	t.Run("an unchanged feed is asked with its validators and its 304 gives the same items", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "application/rss+xml")
		first := b.items(t, nil)
		if h := b.srv.lastRequest(); h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" {
			t.Fatalf("the first request carried validators: %v", h)
		}
		second := b.items(t, nil)
		h := b.srv.lastRequest()
		if h.Get("If-None-Match") != b.srv.tag() {
			t.Errorf("If-None-Match = %q, want the ETag %q", h.Get("If-None-Match"), b.srv.tag())
		}
		if h.Get("If-Modified-Since") != "Fri, 20 Nov 2026 10:00:00 GMT" {
			t.Errorf("If-Modified-Since = %q", h.Get("If-Modified-Since"))
		}
		if b.srv.count304() != 1 {
			t.Fatalf("the server answered 304 %d times, want 1", b.srv.count304())
		}
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("after a 304:\n got %v\nwant %v", second, first)
		}
	})

	t.Run("a changed feed is fetched in full", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "atom.xml", "application/atom+xml")
		if n := len(b.items(t, nil)); n != 2 {
			t.Fatalf("got %d items", n)
		}
		b.srv.set(sample(t, "rss2.xml"))
		got := b.items(t, nil)
		if b.srv.count304() != 0 || len(got) != 3 || got[0].(map[string]any)["id"] != "tag:go.dev,2026:blog/go1.26" {
			t.Fatalf("after a change: %d 304s, items %v", b.srv.count304(), got)
		}
	})

	t.Run("a feed with only Last-Modified is asked with If-Modified-Since", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "feed.json", "application/feed+json")
		b.srv.etag = false
		first := b.items(t, map[string]any{"limit": 1})
		second := b.items(t, map[string]any{"limit": 1})
		if h := b.srv.lastRequest(); h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") == "" {
			t.Fatalf("second request headers: %v", h)
		}
		if b.srv.count304() != 1 || len(second) != 1 || !reflect.DeepEqual(first, second) {
			t.Fatalf("304s %d, first %v, second %v", b.srv.count304(), first, second)
		}
	})

	t.Run("a 304 to a request without validators is an empty list", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "application/rss+xml")
		b.srv.status = http.StatusNotModified
		if got := b.items(t, nil); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("a script changing its items does not change what a 304 gives", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "atom.xml", "application/atom+xml")
		first := b.items(t, nil)
		first[0].(map[string]any)["title"] = "changed by the script"
		second := b.items(t, nil)
		if second[0].(map[string]any)["title"] != "Some notes on DNS TTLs" {
			t.Fatalf("the cache was changed through a result: %v", second[0])
		}
	})
}

func TestFailures(t *testing.T) {
	t.Parallel()

	t.Run("a host outside http allow_hosts is a permission failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "application/rss+xml")
		hc, err := khttp.New(khttp.Config{AllowHosts: []string{"feeds.example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := feed.New(feed.Config{HTTP: hc})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": b.url}})
		if connectors.ClassOf(err) != connectors.Permission {
			t.Fatalf("err = %v, want a permission failure", err)
		}
	})

	t.Run("a 503 is transient with the server's Retry-After", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "application/rss+xml")
		b.srv.status = http.StatusServiceUnavailable
		err := b.failure()
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Transient || ce.RetryAfter != 7*time.Second {
			t.Fatalf("err = %#v", err)
		}
	})

	t.Run("a 408 is transient with the server's Retry-After, not a page that is not a feed", func(t *testing.T) {
		t.Parallel()
		// http.get hands a script any status below 500 but 429; a feed
		// has no script to judge it, and the server's "took too long,
		// send again" is no refusal
		b := setup(t, "rss2.xml", "application/rss+xml")
		b.srv.status = http.StatusRequestTimeout
		err := b.failure()
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Transient || ce.RetryAfter != 7*time.Second {
			t.Fatalf("err = %v, want a transient failure waiting 7s", err)
		}
	})

	t.Run("a page that is not a feed is a logic failure naming the URL", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "text/html")
		b.srv.set([]byte("<!doctype html><html><body>Hello</body></html>"))
		err := b.failure()
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), b.url) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a failure names the feed without its query's values or a user's name", func(t *testing.T) {
		t.Parallel()
		for _, status := range []int{0, http.StatusNotFound} {
			b := setup(t, "rss2.xml", "text/html")
			if status == 0 {
				b.srv.set([]byte("<!doctype html><html><body>Hello</body></html>"))
			} else {
				b.srv.status = status
			}
			u := strings.Replace(b.url, "://", "://reader@", 1) + "?token=s3cr3t-feed-token"
			c, _ := feed.New(feed.Config{})
			_, err := c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": u}})
			if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "reader@") || !strings.Contains(err.Error(), "token=REDACTED") {
				t.Errorf("status %d: err = %v, want the feed named with token=REDACTED and no user", status, err)
			}
		}
	})

	t.Run("a redirect to file:// is a logic failure naming the scheme and the feed", func(t *testing.T) {
		t.Parallel()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}))
		t.Cleanup(ts.Close)
		c, _ := feed.New(feed.Config{})
		_, err := c.Do(context.Background(), connectors.Call{Method: "items", Params: map[string]any{"url": ts.URL + "/feed.xml"}})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), `"file"`) || !strings.Contains(err.Error(), ts.URL+"/feed.xml") {
			t.Fatalf("err = %v, want a logic failure naming file and the feed", err)
		}
	})

	t.Run("a 404 is a logic failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "rss2.xml", "application/rss+xml")
		b.srv.status = http.StatusNotFound
		err := b.failure()
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("bad parameters name themselves", func(t *testing.T) {
		t.Parallel()
		c, _ := feed.New(feed.Config{})
		for _, tc := range []struct {
			params map[string]any
			want   string
		}{
			{map[string]any{}, "url is required"},
			{map[string]any{"url": 3}, "url must be a string"},
			{map[string]any{"url": "ftp://x/feed"}, "absolute http or https URL"},
			{map[string]any{"url": "http://x", "limit": 0}, "limit must be between 1 and 500"},
		} {
			_, err := c.Do(context.Background(), connectors.Call{Method: "items", Params: tc.params})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: err = %v, want %q", tc.params, err, tc.want)
			}
		}
	})
}

func TestReference(t *testing.T) {
	t.Parallel()
	c, _ := feed.New(feed.Config{})
	if got := c.InputTypes(); !reflect.DeepEqual(got, map[string][]string{"feed": {"item"}}) {
		t.Errorf("input types %v", got)
	}
	for _, m := range c.Methods() {
		if m.Doc == "" || m.Result == "" || m.Example == "" || len(m.Args) == 0 {
			t.Errorf("%s lacks reference fields: %+v", m.Name, m)
		}
	}
}
