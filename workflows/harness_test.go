package workflows

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine"
	"keep/engine/config"
	"keep/storage"
)

// clock is the engine's injected clock, the one fake at the machine's edge.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// host is a real engine on a real database in a temp dir, with the files and
// sheets connectors rooted in another temp dir.
type host struct {
	t     *testing.T
	e     *engine.Engine
	clock *clock
	root  string
	cfg   config.Config
}

type hostOpt struct {
	edit func(*config.Config)
	// registry, if set, replaces engine.Connectors(cfg): for tests that need
	// a connector built differently (the system clock).
	registry func(cfg config.Config, c *clock) *connectors.Registry
	start    time.Time
}

func allowAll(c *config.Config) { c.Policy.DefaultMutationMode = "allow" }

func newHost(t *testing.T, o hostOpt) *host {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{root}
	cfg.Connectors.Sheets.Roots = []string{root}
	if o.edit != nil {
		o.edit(&cfg)
	}
	start := o.start
	if start.IsZero() {
		start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	}
	h := &host{t: t, clock: &clock{t: start}, root: root, cfg: cfg}
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(dir, "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var reg *connectors.Registry
	if o.registry != nil {
		reg = o.registry(cfg, h.clock)
	} else if reg, err = engine.Connectors(cfg, engine.ConnectorOpts{}); err != nil {
		t.Fatal(err)
	}
	h.e, err = engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(cfg.Policy), Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// source is an embedded workflow, its constants rewritten by edits
// (old, new, old, new, ...), each of which must apply.
func source(t *testing.T, name string, edits ...string) []byte {
	t.Helper()
	f, ok := Get(name)
	if !ok {
		t.Fatalf("no embedded workflow %s", name)
	}
	src := string(f.Source)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("%s has no %q to rewrite", name, edits[i])
		}
		src = strings.ReplaceAll(src, edits[i], edits[i+1])
	}
	return []byte(src)
}

func (h *host) deploy(name string, src []byte) *engine.DeployResult {
	h.t.Helper()
	res, err := h.e.Deploy(context.Background(), name, src, "")
	if err != nil {
		h.t.Fatalf("deploy %s: %v", name, err)
	}
	return res
}

func (h *host) drain() {
	h.t.Helper()
	if err := h.e.Drain(context.Background()); err != nil {
		h.t.Fatalf("drain: %v", err)
	}
}

func (h *host) write(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// read returns a file under the root, "" if it is missing.
func (h *host) read(rel string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.root, rel))
	if err != nil {
		return ""
	}
	return string(data)
}

func (h *host) inputs(wf string) []engine.InputView {
	h.t.Helper()
	ins, err := h.e.Inputs(context.Background(), wf, engine.Page{Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	return ins
}

func (h *host) mutations(wf string) []engine.MutationView {
	h.t.Helper()
	ms, err := h.e.Mutations(context.Background(), wf, "")
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}

func (h *host) runs(wf string) []engine.RunView {
	h.t.Helper()
	rs, err := h.e.Runs(context.Background(), wf, engine.Page{Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	return rs
}

func (h *host) attention() []engine.AttentionItem {
	h.t.Helper()
	items, err := h.e.Attention(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return items
}

// healthy fails the test if any run of wf failed or anything waits on the user.
func (h *host) healthy(wf string) {
	h.t.Helper()
	for _, r := range h.runs(wf) {
		if strings.HasPrefix(string(r.Status), "failed") || strings.HasPrefix(string(r.Status), "paused") {
			h.t.Errorf("run %s of %s: %s in %s: %s", r.ID, r.Handler, r.Status, r.Phase, r.Error)
		}
	}
	for _, a := range h.attention() {
		h.t.Errorf("attention: %s %s: %s (%s)", a.Kind, a.Workflow, a.Title, a.Reason)
	}
}

// titles lists the inputs' titles, sorted.
func titles(ins []engine.InputView) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Title)
	}
	sort.Strings(out)
	return out
}

func removeFile(h *host, rel string) error {
	return os.Remove(filepath.Join(h.root, rel))
}
