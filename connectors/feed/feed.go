// Package feed is the connector for syndication feeds: RSS 2.0, Atom and
// JSON Feed, read with github.com/mmcdole/gofeed. It has one read, items.
//
// Feeds are fetched through the http connector's get, so they obey the same
// [connectors.http] allow_hosts, redirect policy, body limit and failure
// classes as any other GET. Each fetch is conditional: the connector
// remembers, per URL (in memory, and in Config.Dir across restarts), the
// ETag and Last-Modified of the last full answer and the items parsed from
// it, and a
// 304 Not Modified returns those items again (an empty list when a server
// answers 304 to a request that carried no validators). Scripts therefore
// always see the whole feed and deduplicate by item id, as they would
// without the cache. How an entry gets its id is itemIDs'.
package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mmcdole/gofeed"

	"keep/connectors"
	khttp "keep/connectors/http"
)

// Defaults for Config's zero values.
const (
	DefaultMaxItems   = 500
	DefaultRemembered = 256
	// maxSummary caps an item's summary in runes: feeds that put whole
	// articles in their description would otherwise fill the trace.
	maxSummary = 2000
)

// Config configures the connector.
type Config struct {
	// HTTP fetches the feeds through its "get" method. Default: an http
	// connector with no allow_hosts (any host); the host passes the one
	// built from [connectors.http] so both obey the same hosts.
	HTTP connectors.Connector
	// MaxItems caps the items returned per call, and kept per URL for a 304
	// (the first, as the feed orders them). Default 500.
	MaxItems int
	// Remembered caps the URLs whose validators are kept in memory.
	// Default 256.
	Remembered int
	// Dir keeps each URL's validators and items in a file of its own, so a
	// restarted process still sends them and a 304 still has its items
	// (the host uses DATABASE.feeds beside the database). Empty: memory
	// only.
	Dir string
}

// Connector reads feeds. It is safe for concurrent use.
type Connector struct {
	http       connectors.Connector
	maxItems   int
	remembered int

	dir string

	mu    sync.Mutex
	cache map[string]*validators
	order []string // URLs in the order they were first cached, to evict the oldest
}

// validators is what the last full answer for a URL left behind.
type validators struct {
	etag         string
	lastModified string
	items        []any
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a feed connector, filling in the defaults.
func New(cfg Config) (*Connector, error) {
	c := &Connector{http: cfg.HTTP, maxItems: cfg.MaxItems, remembered: cfg.Remembered, dir: cfg.Dir, cache: map[string]*validators{}}
	if c.http == nil {
		hc, err := khttp.New(khttp.Config{})
		if err != nil {
			return nil, fmt.Errorf("feed: %w", err)
		}
		c.http = hc
	}
	if c.maxItems <= 0 {
		c.maxItems = DefaultMaxItems
	}
	if c.remembered <= 0 {
		c.remembered = DefaultRemembered
	}
	return c, nil
}

// Name is "feed".
func (c *Connector) Name() string { return "feed" }

// InputTypes: a producer polling a feed registers its entries as items.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"feed": {"item"}}
}

// Methods lists items.
func (c *Connector) Methods() []connectors.Method {
	return []connectors.Method{{
		Name: "items", Kind: connectors.Read, Scope: hostOf, ScopeKind: connectors.ScopeHosts,
		Doc: "Fetches an RSS 2.0, Atom or JSON Feed with a conditional GET and lists its items, newest first as the feed orders them; " +
			"an unchanged feed (304) gives the items of the last full answer keep saw (kept across restarts), or [] if none. " +
			"id is the entry's guid (Atom or JSON Feed id), else its link, else a hash of its title and date, and stays when the entry is edited; " +
			"when entries share one, the oldest keeps it and each other gets it with \"#\" and a hash of its content added, so two entries never share an id " +
			"(an entry listed twice alike under its guid is one item; alike entries with no guid, link or date are each an item). " +
			"A feed listing more than " + strconv.Itoa(MaxEntries) + " entries is refused.",
		Args: []connectors.Arg{
			{Name: "url", Type: "string", Required: true, Doc: "the feed's http or https URL; its host must be in [connectors.http] allow_hosts when that is set"},
			{Name: "limit", Type: "number", Doc: "at most this many items (default and maximum 500)"},
		},
		Result: "Array<{ id: string, title: string, url: string | null, published: string | null, summary: string }>",
		Example: `for (const it of await ctx.feed.items({ url: "https://blog.example.com/feed.xml" })) ` +
			`ctx.registerInput({ source: "feed", type: "item", id: it.id, title: it.title })`,
	}}
}

// Do performs items.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	if call.Method != "items" {
		return nil, connectors.Errorf(connectors.Logic, "feed has no method %q (it has: items)", call.Method)
	}
	return c.items(ctx, call.Params)
}

func (c *Connector) items(ctx context.Context, p map[string]any) (any, error) {
	url, err := connectors.String(p, "url", true)
	if err != nil {
		return nil, err
	}
	limit, err := connectors.Int(p, "limit", int64(c.maxItems), 1, int64(c.maxItems))
	if err != nil {
		return nil, err
	}
	headers := map[string]any{"Accept": "application/feed+json, application/atom+xml, application/rss+xml, application/xml;q=0.9, */*;q=0.8"}
	prev := c.lookup(url)
	if prev != nil && prev.etag != "" {
		headers["If-None-Match"] = prev.etag
	}
	if prev != nil && prev.lastModified != "" {
		headers["If-Modified-Since"] = prev.lastModified
	}
	raw, err := c.http.Do(ctx, connectors.Call{Method: "get", Params: map[string]any{"url": url, "headers": headers}})
	if err != nil {
		return nil, err // already classified by the http connector
	}
	res, ok := raw.(map[string]any)
	if !ok {
		return nil, connectors.Errorf(connectors.Internal, "feed: http get gave %T", raw)
	}
	status, _ := res["status"].(int64)
	hdr, _ := res["headers"].(map[string]any)
	switch {
	case status == 304:
		if prev == nil {
			return []any{}, nil
		}
		return head(prev.items, limit), nil
	case status < 200 || status > 299:
		// get left this answer for a script to judge; a feed has none, so
		// it is judged as any read's (a 408 is a "send again", not a
		// refusal)
		x := connectors.Exchange{Status: int(status), Sent: true}
		retryAfter, _ := hdr["retry-after"].(string)
		return nil, connectors.Failure(x, connectors.ParseRetryAfter(strings.TrimSpace(retryAfter)),
			fmt.Errorf("GET %s answered %d, not a feed", redacted(url), status))
	}
	body, _ := res["body"].(string)
	contentType, _ := hdr["content-type"].(string)
	body = decoded(body, contentType)
	if n := entryCount(body); n > MaxEntries {
		return nil, connectors.Errorf(connectors.Logic, "%s lists %d entries, more than the %d keep reads", redacted(url), n, MaxEntries)
	}
	// gofeed holds every element open around the one it reads, so a
	// server nesting them a million deep would cost half a gigabyte
	if err := connectors.CheckXMLDepth(strings.NewReader(body), connectors.MaxXMLDepth); err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s is not a feed keep reads: %w", redacted(url), err)
	}
	f, err := gofeed.NewParser().ParseString(body)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s is not an RSS, Atom or JSON feed: %w", redacted(url), err)
	}
	// what is kept (in memory and on disk, for every URL) is what a call
	// may return: a feed of twenty thousand items is not kept whole
	items := entries(f.Items, c.maxItems)
	etag, _ := hdr["etag"].(string)
	lastModified, _ := hdr["last-modified"].(string)
	c.remember(url, &validators{etag: etag, lastModified: lastModified, items: items})
	return head(items, limit), nil
}

// head returns the first n items as a fresh list, so a script can't change
// the cached one.
func head(items []any, n int64) []any {
	if int64(len(items)) > n {
		items = items[:n]
	}
	out := make([]any, len(items))
	for i, it := range items {
		m := make(map[string]any, 5)
		for k, v := range it.(map[string]any) {
			m[k] = v
		}
		out[i] = m
	}
	return out
}

func (c *Connector) lookup(url string) *validators {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.cache[url]; v != nil {
		return v
	}
	v := c.load(url)
	if v != nil {
		c.keep(url, v)
	}
	return v
}

// remember keeps v for url; without validators there is nothing to send
// next time, so the entry is dropped.
func (c *Connector) remember(url string, v *validators) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.save(url, v)
	if v.etag == "" && v.lastModified == "" {
		if _, ok := c.cache[url]; ok {
			delete(c.cache, url)
			c.order = deleteString(c.order, url)
		}
		return
	}
	c.keep(url, v)
}

// keep holds v in memory, evicting the oldest URL past Remembered. The
// caller holds c.mu.
func (c *Connector) keep(url string, v *validators) {
	if _, ok := c.cache[url]; !ok {
		c.order = append(c.order, url)
		for len(c.order) > c.remembered {
			delete(c.cache, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.cache[url] = v
}

func deleteString(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// entries are the feed's first limit entries as scripts see them, each with
// an id of its own (itemIDs, which reads the whole feed: an id must not
// depend on where the cap falls); an entry the feed lists twice under one
// id is one item.
func entries(its []*gofeed.Item, limit int) []any {
	links := make([]string, len(its))
	for i, it := range its {
		links[i] = link(it)
	}
	ids := itemIDs(its, links)
	out := make([]any, 0, min(len(its), limit))
	for i, it := range its {
		if len(out) == limit {
			break
		}
		if ids[i] != "" {
			out = append(out, item(it, ids[i], links[i]))
		}
	}
	return out
}

func link(it *gofeed.Item) string {
	l := strings.TrimSpace(it.Link)
	if l == "" && len(it.Links) > 0 {
		l = strings.TrimSpace(it.Links[0])
	}
	return l
}

// item is one feed entry as scripts see it.
func item(it *gofeed.Item, id, link string) map[string]any {
	var published any
	if t := when(it); t != nil {
		published = t.UTC().Format(time.RFC3339)
	}
	summary := it.Description
	if strings.TrimSpace(summary) == "" {
		summary = it.Content
	}
	var u any
	if link != "" {
		u = link
	}
	return map[string]any{
		"id":        id,
		"title":     strings.TrimSpace(it.Title),
		"url":       u,
		"published": published,
		"summary":   clip(strings.TrimSpace(summary), maxSummary),
	}
}

func when(it *gofeed.Item) *time.Time {
	if it.PublishedParsed != nil {
		return it.PublishedParsed
	}
	return it.UpdatedParsed
}

// itemIDs gives each entry its id, "" for an entry dropped as a second
// listing of another. Scripts take an item once per id, so an id must
// survive the entry being fetched again, edited in place, or moved down by
// newer entries, and two entries must never share one.
//
// An entry's key is its own id (RSS guid, Atom id, JSON Feed id), else its
// link, else a hash of its title and date: the rule ids had before entries
// sharing a key were told apart, kept so that no entry changes id (and
// comes in again) on an upgrade. A key only one entry of the feed has is
// its id, whatever else about the entry changes.
//
// Entries sharing a key are told apart by their content (title, link,
// date, summary and body). The one that was in the feed first keeps the
// bare key, as it had it while it was alone: the earliest dated when all
// are dated, else the one listed last, feeds listing newest first. Each
// other gets the key and a hash of its content, so a new entry under the
// key leaves the ids already given alone. Under a feed's own key, an entry
// whose content repeats one already seen is that entry listed twice, and
// dropped; under a made-up key nothing says two alike entries are one (two
// "Build failed" alerts with no id, link or date), so each is an item,
// numbered from the oldest.
func itemIDs(its []*gofeed.Item, links []string) []string {
	type entry struct {
		key   string
		own   bool // key is the feed's, not made up
		print string
	}
	es := make([]entry, len(its))
	groups := map[string][]int{}
	for i, it := range its {
		e := entry{print: fingerprint(it, links[i])}
		switch {
		case strings.TrimSpace(it.GUID) != "":
			e.key, e.own = strings.TrimSpace(it.GUID), true
		case links[i] != "":
			e.key, e.own = links[i], true
		default:
			date := it.Published
			if date == "" {
				date = it.Updated
			}
			sum := sha256.Sum256([]byte(strings.TrimSpace(it.Title) + "\x00" + strings.TrimSpace(date)))
			e.key = "sha256:" + hex.EncodeToString(sum[:16])
		}
		es[i] = e
		groups[e.key] = append(groups[e.key], i)
	}
	ids := make([]string, len(its))
	used := map[string]bool{}
	seen := map[string]map[string]bool{} // per key, the contents given an id
	// per base, the number to try next: the ones below it are taken, and
	// searching from 2 for every alike entry is quadratic in a feed that
	// repeats one entry a hundred thousand times
	next := map[string]int{}
	for key, g := range groups {
		a := first(its, g)
		ids[a] = key
		used[key] = true
		seen[key] = map[string]bool{es[a].print: true}
	}
	// oldest first (feeds list newest first), so the numbering of alike
	// entries is not shifted by a newer one
	for i := len(its) - 1; i >= 0; i-- {
		e := es[i]
		if ids[i] != "" {
			continue
		}
		if e.own && seen[e.key][e.print] {
			continue
		}
		seen[e.key][e.print] = true
		base := e.key + "#" + e.print[:16]
		id := base
		n := max(next[base], 2)
		for ; used[id]; n++ {
			id = base + "#" + strconv.Itoa(n)
		}
		next[base] = n
		used[id] = true
		ids[i] = id
	}
	return ids
}

// first is the entry of g (indexes into its, in feed order) that was in
// the feed first.
func first(its []*gofeed.Item, g []int) int {
	a := g[len(g)-1]
	for _, i := range g {
		if when(its[i]) == nil {
			return a
		}
	}
	for _, i := range g {
		if when(its[i]).Before(*when(its[a])) {
			a = i
		}
	}
	return a
}

// fingerprint is a hash of what an entry says, to tell apart entries
// sharing a key.
func fingerprint(it *gofeed.Item, link string) string {
	date := it.Published
	if date == "" {
		date = it.Updated
	}
	h := sha256.New()
	for _, s := range []string{it.Title, link, date, it.Description, it.Content} {
		h.Write([]byte(strings.TrimSpace(s)))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// redacted is the URL as a message may quote it (connectors.RedactURLText).
func redacted(s string) string { return connectors.RedactURLText(s) }

// hostOf is the feed's host name, what a grant or a trace names.
func hostOf(p map[string]any) string {
	s, _ := p["url"].(string)
	u, err := neturl.Parse(s)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
