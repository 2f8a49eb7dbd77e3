package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

func TestEmbedded(t *testing.T) {
	t.Parallel()

	want := []string{"big-files-notify.js", "demo.js", "digest-to-slack.js", "email-to-sheet.js", "feed-to-webhook.js", "meeting-reminders.js", "notes-to-csv.js"}

	t.Run("All lists every example workflow by name, in order", func(t *testing.T) {
		t.Parallel()
		var names []string
		for _, f := range All() {
			names = append(names, f.Name)
			if len(f.Source) == 0 {
				t.Errorf("%s is empty", f.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("All() = %v, want %v", names, want)
		}
	})

	t.Run("Get finds a file by name and nothing else", func(t *testing.T) {
		t.Parallel()
		f, ok := Get("demo.js")
		if !ok || f.Name != "demo.js" || !strings.Contains(string(f.Source), "Keep.workflow") {
			t.Fatalf("Get(demo.js) = %q, %v", f.Name, ok)
		}
		for _, name := range []string{"", "nope.js", "../workflows.go", "workflows.go", "."} {
			if _, ok := Get(name); ok {
				t.Errorf("Get(%q) found something", name)
			}
		}
	})

	t.Run("a caller changing a file does not change the embedded one", func(t *testing.T) {
		t.Parallel()
		f, _ := Get("demo.js")
		f.Source[0] = '#'
		g, _ := Get("demo.js")
		if g.Source[0] == '#' {
			t.Fatal("Get handed out the embedded bytes")
		}
	})

	t.Run("every file validates with the default config's connectors", func(t *testing.T) {
		t.Parallel()
		cfg := config.Default()
		reg, err := engine.Connectors(cfg, engine.ConnectorOpts{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		e, err := engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(cfg.Policy)})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range All() {
			sc, err := e.Validate(f.Name, f.Source)
			if err != nil {
				t.Errorf("%s does not validate:\n%v", f.Name, err)
				continue
			}
			if got, want := sc.Workflow.Name, strings.TrimSuffix(f.Name, ".js"); got != want {
				t.Errorf("%s declares the workflow %q; name it after its file, %q", f.Name, got, want)
			}
			if len(sc.Workflow.Producers) == 0 || len(sc.Workflow.Consumers) == 0 {
				t.Errorf("%s should show a producer and a consumer", f.Name)
			}
			if len(sc.Capabilities) != 1 {
				t.Errorf("%s uses mutations %v; an example makes exactly one kind of change", f.Name, sc.Capabilities)
			}
		}
	})
}

func TestNotesToCSV(t *testing.T) {
	t.Parallel()

	t.Run("each note becomes one CSV line, with the header once", func(t *testing.T) {
		t.Parallel()
		h := newHost(t, hostOpt{edit: allowAll})
		h.Write("inbox/groceries.txt", "Groceries\nmilk, eggs\n")
		h.Write("inbox/quote.txt", `She said "hi"`+"\n")
		h.Write("inbox/ignored.md", "not a note")
		h.Deploy("notes-to-csv.js", source(t, "notes-to-csv.js"))
		h.Drain()
		h.Healthy("notes-to-csv")

		lines := strings.Split(strings.TrimSuffix(h.Read("notes-log.csv"), "\n"), "\n")
		if len(lines) != 3 || lines[0] != "note,modified,title,text" {
			t.Fatalf("notes-log.csv =\n%s", strings.Join(lines, "\n"))
		}
		if !strings.HasPrefix(lines[1], "groceries.txt,") || !strings.HasSuffix(lines[1], `,Groceries,"Groceries milk, eggs"`) {
			t.Errorf("line for groceries.txt = %s", lines[1])
		}
		if !strings.HasPrefix(lines[2], "quote.txt,") || !strings.HasSuffix(lines[2], `,"She said ""hi""","She said ""hi"""`) {
			t.Errorf("line for quote.txt = %s", lines[2])
		}

		ins := h.Inputs("notes-to-csv")
		if got := titles(ins); !slices.Equal(got, []string{`Note groceries.txt: "Groceries"`, `Note quote.txt: "She said "hi""`}) {
			t.Errorf("input titles = %q", got)
		}
		for _, in := range ins {
			if in.Source != "files" || in.Type != "file" || !strings.HasPrefix(in.ExternalID, "inbox/") {
				t.Errorf("input %s is %s/%s %s", in.Title, in.Source, in.Type, in.ExternalID)
			}
			if in.Status != api.InputDone || len(in.Outputs) != 1 {
				t.Errorf("input %s: %s with %d outputs", in.Title, in.Status, len(in.Outputs))
				continue
			}
			if o := in.Outputs[0]; o.Status != "applied" || o.Method != "append" || !strings.HasSuffix(o.Title, " to notes-log.csv") {
				t.Errorf("output of %s = %+v", in.Title, o)
			}
		}
	})

	t.Run("a note added later is logged once and the earlier ones are not logged again", func(t *testing.T) {
		t.Parallel()
		h := newHost(t, hostOpt{edit: allowAll})
		h.Write("inbox/a.txt", "first")
		h.Deploy("notes-to-csv.js", source(t, "notes-to-csv.js"))
		h.Drain()
		h.Write("inbox/b.txt", "second")
		h.Clock.Advance(5 * time.Minute)
		h.Drain()
		h.Clock.Advance(5 * time.Minute)
		h.Drain()
		h.Healthy("notes-to-csv")

		log := h.Read("notes-log.csv")
		if strings.Count(log, "a.txt,") != 1 || strings.Count(log, "b.txt,") != 1 || strings.Count(log, "\n") != 3 {
			t.Fatalf("notes-log.csv =\n%s", log)
		}
		if n := len(h.Mutations("notes-to-csv")); n != 2 {
			t.Errorf("%d mutations, want 2", n)
		}
	})

	t.Run("a note deleted before it is logged is done with no external change", func(t *testing.T) {
		t.Parallel()
		h := newHost(t, hostOpt{edit: func(c *config.Config) { c.Policy.DefaultMutationMode = "ask" }})
		h.Write("inbox/a.txt", "first")
		h.Write("inbox/b.txt", "second")
		h.Deploy("notes-to-csv.js", source(t, "notes-to-csv.js"))
		h.Drain() // a.txt waits for approval, b.txt waits behind it
		items := h.Attention()
		if len(items) != 1 || items[0].Kind != api.AttentionApproval {
			t.Fatalf("attention = %+v, want one approval", items)
		}
		if err := h.E.Approve(context.Background(), items[0].ID, true); err != nil {
			t.Fatal(err)
		}
		// b.txt is found, then deleted before its turn
		if err := h.Remove("inbox/b.txt"); err != nil {
			t.Fatal(err)
		}
		h.Drain()
		h.Healthy("notes-to-csv")
		if log := h.Read("notes-log.csv"); strings.Contains(log, "b.txt") || !strings.Contains(log, "a.txt") {
			t.Fatalf("notes-log.csv =\n%s", log)
		}
		for _, in := range h.Inputs("notes-to-csv") {
			if in.Status != api.InputDone {
				t.Errorf("input %s is %s", in.Title, in.Status)
			}
			if strings.Contains(in.Title, "b.txt") && len(in.Outputs) != 0 {
				t.Errorf("the deleted note has outputs %+v", in.Outputs)
			}
		}
	})
}

// feed is an httptest feed with an ETag, served as RSS 2.0, Atom or JSON
// Feed, the way real feed hosts write each.
type feed struct {
	format string // "rss", "atom" or "json"
	mu     sync.Mutex
	items  []map[string]any
	gets   int
	not    int // 304 answers
}

func (f *feed) add(id, title string) {
	f.mu.Lock()
	f.items = append(f.items, map[string]any{"id": id, "title": title, "url": "https://example.com/" + id})
	f.mu.Unlock()
}

func (f *feed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	etag := fmt.Sprintf(`"v%d"`, len(f.items))
	if r.Header.Get("If-None-Match") == etag {
		f.not++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	day := func(i int) time.Time { return time.Date(2026, 11, 1+i, 8, 0, 0, 0, time.UTC) }
	switch f.format {
	case "rss":
		w.Header().Set("Content-Type", "application/rss+xml; charset=utf-8")
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Example</title><link>https://example.com/</link><description>news</description>`)
		for i, it := range f.items {
			fmt.Fprintf(w, "<item><title>%s</title><link>%s</link><guid isPermaLink=\"false\">%s</guid><pubDate>%s</pubDate><description>about %[1]s</description></item>\n",
				it["title"], it["url"], it["id"], day(i).Format(time.RFC1123Z))
		}
		io.WriteString(w, "</channel></rss>")
	case "atom":
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Example</title><id>https://example.com/</id><updated>2026-11-01T08:00:00Z</updated>`)
		for i, it := range f.items {
			fmt.Fprintf(w, "<entry><title>%s</title><link href=\"%s\"/><id>%s</id><updated>%s</updated><summary>about %[1]s</summary></entry>\n",
				it["title"], it["url"], it["id"], day(i).Format(time.RFC3339))
		}
		io.WriteString(w, "</feed>")
	default:
		w.Header().Set("Content-Type", "application/feed+json")
		items := make([]map[string]any, len(f.items))
		for i, it := range f.items {
			items[i] = map[string]any{"id": it["id"], "title": it["title"], "url": it["url"],
				"date_published": day(i).Format(time.RFC3339), "content_text": "about " + it["title"].(string)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"version": "https://jsonfeed.org/version/1.1", "title": "Example", "items": items})
	}
}

func feedSource(t *testing.T, feedURL, hookURL string) []byte {
	return source(t, "feed-to-webhook.js",
		`"http://127.0.0.1:8080/feed.xml"`, fmt.Sprintf("%q", feedURL),
		`"http://127.0.0.1:8080/webhook"`, fmt.Sprintf("%q", hookURL))
}

// testFeedToWebhook runs feed-to-webhook against f: each item is posted once,
// across drains, an unchanged feed (a 304) and a redeploy.
func testFeedToWebhook(t *testing.T, f *feed) {
	f.add("a1", "Alpha")
	f.add("b2", "Beta")
	wh := kit.NewSink(t)
	fs := httptest.NewServer(f)
	t.Cleanup(fs.Close)

	h := newHost(t, hostOpt{edit: allowAll})
	src := feedSource(t, fs.URL+"/feed.xml", wh.URL+"/hook")
	h.Deploy("feed-to-webhook.js", src)
	h.Drain()
	h.Healthy("feed-to-webhook")
	wh.Posted(t, "a1", "b2")

	h.Drain()
	h.Clock.Advance(5 * time.Minute)
	h.Drain()
	wh.Posted(t, "a1", "b2")
	f.mu.Lock()
	if f.not == 0 {
		t.Error("the second poll did not send the ETag back")
	}
	f.mu.Unlock()

	// a new version (here: the file with a comment more; the same file
	// again is no new version) keeps what was done
	if res := h.Deploy("feed-to-webhook.js", append(src, "\n// version 2\n"...)); res.Version != 2 {
		t.Fatalf("redeploy made version %d", res.Version)
	}
	h.Drain()
	f.add("c3", "Gamma")
	h.Clock.Advance(5 * time.Minute)
	h.Drain()
	h.Healthy("feed-to-webhook")
	wh.Posted(t, "a1", "b2", "c3")

	ins := h.Inputs("feed-to-webhook")
	want := []string{`Feed item a1: "Alpha"`, `Feed item b2: "Beta"`, `Feed item c3: "Gamma"`}
	if got := titles(ins); !slices.Equal(got, want) {
		t.Errorf("input titles = %q, want %q", got, want)
	}
	for _, in := range ins {
		if in.Source != "feed" || in.Type != "item" || in.Status != api.InputDone || len(in.Outputs) != 1 {
			t.Errorf("input %s: %s/%s %s, %d outputs", in.Title, in.Source, in.Type, in.Status, len(in.Outputs))
		}
	}
	for _, m := range h.Mutations("feed-to-webhook") {
		if m.Status != "applied" || m.Connector != "http" || !strings.HasPrefix(m.UITitle, "Send \"") {
			t.Errorf("mutation %s: %s.%s %s %q", m.ID, m.Connector, m.Method, m.Status, m.UITitle)
		}
	}
}

func TestFeedToWebhook(t *testing.T) {
	t.Parallel()

	for _, format := range []string{"rss", "atom", "json"} {
		t.Run("each "+format+" feed item is posted exactly once, across drains and a redeploy", func(t *testing.T) {
			t.Parallel()
			testFeedToWebhook(t, &feed{format: format})
		})
	}

	t.Run("a post whose answer is lost is confirmed through the reconcile URL, not sent again", func(t *testing.T) {
		t.Parallel()
		f := &feed{format: "atom"}
		f.add("a1", "Alpha")
		wh := kit.NewSink(t)
		wh.Set("abort-after-apply", 1) // the sender cannot tell whether it arrived
		fs := httptest.NewServer(f)
		t.Cleanup(fs.Close)

		h := newHost(t, hostOpt{edit: allowAll})
		h.Deploy("feed-to-webhook.js", feedSource(t, fs.URL+"/feed.xml", wh.URL+"/hook"))
		h.Drain()
		for i := 0; i < 10 && len(h.Mutations("feed-to-webhook")) > 0 && h.Mutations("feed-to-webhook")[0].Status != "applied"; i++ {
			h.Clock.Advance(time.Minute)
			h.Drain()
		}
		ms := h.Mutations("feed-to-webhook")
		if len(ms) != 1 || ms[0].Status != "applied" || ms[0].ResolvedBy != "reconciler" {
			t.Fatalf("mutations = %+v, want one applied by the reconciler", ms)
		}
		if wh.Gets() == 0 {
			t.Error("the webhook was never asked whether the delivery arrived")
		}
		wh.Posted(t, "a1")
		h.Healthy("feed-to-webhook")
		if ins := h.Inputs("feed-to-webhook"); len(ins) != 1 || ins[0].Status != api.InputDone {
			t.Errorf("inputs = %+v", ins)
		}
	})
}

func TestDemo(t *testing.T) {
	t.Parallel()

	t.Run("a note becomes an input, an approval, and after approving a summary", func(t *testing.T) {
		t.Parallel()
		h := newHost(t, hostOpt{}) // default grants: ask
		h.Write("demo/inbox/hello.txt", "\nHello, keep!\nThis is my first note.\n")
		res := h.Deploy("demo.js", source(t, "demo.js"))
		if len(res.Capabilities) != 1 || res.Capabilities[0].Capability != "files.write" || res.Capabilities[0].Mode != "ask" {
			t.Errorf("capabilities = %+v, want files.write asked", res.Capabilities)
		}
		h.Drain()

		ins := h.Inputs("demo")
		if len(ins) != 1 || ins[0].Title != `Note hello.txt: "Hello, keep!"` {
			t.Fatalf("inputs = %q", titles(ins))
		}
		if ins[0].Status != api.InputNeedsAttention {
			t.Errorf("input status %s, want needs attention", ins[0].Status)
		}
		items := h.Attention()
		if len(items) != 1 || items[0].Kind != api.AttentionApproval || items[0].Workflow != "demo" {
			t.Fatalf("attention = %+v, want one approval", items)
		}
		a := items[0]
		if a.Title != "Write a summary of hello.txt to demo/done/hello.txt" || !strings.Contains(a.Preview, "demo/done/hello.txt") {
			t.Errorf("approval %q, preview %q", a.Title, a.Preview)
		}
		if !slices.Contains(a.Inputs, `Note hello.txt: "Hello, keep!"`) {
			t.Errorf("approval inputs = %q", a.Inputs)
		}
		if h.Read("demo/done/hello.txt") != "" {
			t.Fatal("the summary was written before approval")
		}

		if err := h.E.Approve(context.Background(), a.ID, false); err != nil {
			t.Fatal(err)
		}
		h.Drain()
		h.Healthy("demo")
		out := h.Read("demo/done/hello.txt")
		for _, want := range []string{"Summary of hello.txt", "First line: Hello, keep!", "Lines: 2", "Words: 7"} {
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
		ins = h.Inputs("demo")
		if ins[0].Status != api.InputDone || len(ins[0].Outputs) != 1 || ins[0].Outputs[0].Status != "applied" {
			t.Errorf("input after approval: %s, outputs %+v", ins[0].Status, ins[0].Outputs)
		}
	})

	t.Run("rejecting the write leaves no summary and nothing waiting", func(t *testing.T) {
		t.Parallel()
		h := newHost(t, hostOpt{})
		h.Write("demo/inbox/nope.txt", "Not this one")
		h.Deploy("demo.js", source(t, "demo.js"))
		h.Drain()
		items := h.Attention()
		if len(items) != 1 {
			t.Fatalf("attention = %+v", items)
		}
		if err := h.E.Reject(context.Background(), items[0].ID); err != nil {
			t.Fatal(err)
		}
		h.Drain()
		h.Clock.Advance(time.Minute)
		h.Drain()
		h.Healthy("demo")
		if h.Read("demo/done/nope.txt") != "" {
			t.Fatal("a rejected summary was written")
		}
		ins := h.Inputs("demo")
		if len(ins) != 1 || ins[0].Status == api.InputPending || ins[0].Status == api.InputNeedsAttention ||
			len(ins[0].Outputs) != 1 || ins[0].Outputs[0].Status != "skipped" {
			t.Errorf("inputs = %+v", ins)
		}
	})
}
