package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/bus"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// clock is kit's fake clock: engine's internal tests cannot import
// enginetest (it imports engine), so they build their own bundle on kit.
type clock = kit.Clock

type bundle struct {
	t      testing.TB
	e      *Engine
	db     *storage.DB
	clock  *clock
	root   string // the files connector's root
	dbPath string
	cfg    config.Config
	useBus bool
	bus    *bus.Bus
}

type setupOpt func(*config.Config)

func allowMutations(c *config.Config) { c.Policy.DefaultMutationMode = "allow" }

// setup opens a real database in a temp dir and an engine on it, with the
// files and sheets connectors rooted in another temp dir.
func setup(t testing.TB, opts ...setupOpt) *bundle {
	t.Helper()
	return newBundle(t, false, opts...)
}

// setupWithBus is setup with a real event bus on the same database,
// journaling the engine's notifications (its loop is not started).
func setupWithBus(t *testing.T, opts ...setupOpt) *bundle {
	t.Helper()
	return newBundle(t, true, opts...)
}

func newBundle(t testing.TB, useBus bool, opts ...setupOpt) *bundle {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{root}
	cfg.Connectors.Sheets.Roots = []string{root}
	for _, o := range opts {
		o(&cfg)
	}
	b := &bundle{t: t, clock: kit.NewClock(time.Time{}), root: root,
		dbPath: filepath.Join(dir, "keep.db"), cfg: cfg, useBus: useBus}
	b.open()
	return b
}

func (b *bundle) open() {
	t := b.t
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: b.dbPath})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Connectors(b.cfg, ConnectorOpts{Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	o := Opts{DB: db, Connectors: reg, Policy: PolicyFrom(b.cfg.Policy), Now: b.clock.Now}
	if b.useBus {
		b.bus = bus.New(db, bus.Opts{Now: b.clock.Now})
		o.Events = b.bus
	}
	e, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	b.db, b.e = db, e
	t.Cleanup(func() {
		// a test that fails with the engine started leaves it running:
		// stopped before its database closes, it neither writes to a
		// closed database nor outlives the test into the next
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
		db.Close()
	})
}

// reopen simulates a restart: a new engine on the same file.
func (b *bundle) reopen() {
	b.t.Helper()
	b.db.Close()
	b.open()
}

func (b *bundle) deploy(name, src string) *api.DeployResult {
	b.t.Helper()
	res, err := b.e.Deploy(context.Background(), name+".js", []byte(src), "")
	if err != nil {
		b.t.Fatalf("deploy %s: %v", name, err)
	}
	return res
}

func (b *bundle) drain() {
	b.t.Helper()
	if err := b.e.Drain(context.Background()); err != nil {
		b.t.Fatalf("drain: %v", err)
	}
}

func (b *bundle) write(rel, content string) {
	b.t.Helper()
	p := filepath.Join(b.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) read(rel string) string {
	b.t.Helper()
	data, err := os.ReadFile(filepath.Join(b.root, rel))
	if err != nil {
		return ""
	}
	return string(data)
}

func (b *bundle) runs(wf string) []api.RunView {
	b.t.Helper()
	rs, err := b.e.Runs(context.Background(), wf, api.Page{Limit: 1000})
	if err != nil {
		b.t.Fatal(err)
	}
	return rs
}

func (b *bundle) events(wf, topic string) []api.EventView {
	b.t.Helper()
	evs, err := b.e.Events(context.Background(), wf, api.EventFilter{Topic: topic, Limit: 1000})
	if err != nil {
		b.t.Fatal(err)
	}
	return evs
}

func (b *bundle) mutations(wf string) []api.MutationView {
	b.t.Helper()
	ms, err := b.e.Mutations(context.Background(), wf, "")
	if err != nil {
		b.t.Fatal(err)
	}
	return ms
}

func (b *bundle) inputs(wf string) []api.InputView {
	b.t.Helper()
	ins, err := b.e.Inputs(context.Background(), wf, api.Page{Limit: 1000})
	if err != nil {
		b.t.Fatal(err)
	}
	return ins
}

func (b *bundle) workflow(name string) *api.WorkflowDetail {
	b.t.Helper()
	d, err := b.e.Workflow(context.Background(), name)
	if err != nil {
		b.t.Fatal(err)
	}
	return d
}
