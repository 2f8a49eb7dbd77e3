// Package enginetest is the one harness for tests that drive a real engine
// from outside package engine (workflows, tui, daemon, benchmark, engine's
// external tests): a real SQLite database in a temp dir, the real
// connectors rooted in another temp dir, an injected fake clock, and
// helpers to deploy, drain and read the views.
//
// Package engine's internal tests cannot import it (enginetest imports
// engine); they keep their own setup and share the engine-free pieces
// through enginetest/kit.
package enginetest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// Clock, Start, Timeout and the waits are kit's, named here so a test
// imports one package.
type Clock = kit.Clock

var Start = kit.Start

const Timeout = kit.Timeout

func Wait[T any](tb testing.TB, ch <-chan T, d time.Duration) T {
	tb.Helper()
	return kit.Wait(tb, ch, d)
}

func WaitRecv[T any](tb testing.TB, ch <-chan T, d time.Duration) (T, bool) {
	tb.Helper()
	return kit.WaitRecv(tb, ch, d)
}

func WaitGroup(tb testing.TB, wg *sync.WaitGroup, d time.Duration) {
	tb.Helper()
	kit.WaitGroup(tb, wg, d)
}

func Until(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	kit.Until(tb, d, what, cond)
}

// Opts shape a Host; the zero value is the default policy (a mutation asks
// first), the clock at Start, connectors on the same clock.
type Opts struct {
	// Config edits the config before anything is built.
	Config []func(*config.Config)
	// Registry, if set, replaces engine.Connectors: for tests that need a
	// connector built differently.
	Registry func(cfg config.Config, clock *Clock) (*connectors.Registry, error)
	// Start is the clock's start; zero: Start.
	Start time.Time
	// SystemClock runs the engine and connectors on time.Now (daemons and
	// benchmarks that wait for real time); Clock is still made but unused.
	SystemClock bool
	// ConnectorsOnSystemClock leaves the connectors (ctx.system.now) on
	// time.Now while the engine runs on the fake clock.
	ConnectorsOnSystemClock bool
	// Logger for storage and the engine; nil: discarded.
	Logger *slog.Logger
	// Events, if set, builds the engine's event sink on the database.
	Events func(db *storage.DB, now func() time.Time) engine.EventSink
	// Repairer, if set, is handed the engine's logic failures.
	Repairer engine.Repairer
}

// AllowMutations is a config edit: mutations run without asking.
func AllowMutations(c *config.Config) { c.Policy.DefaultMutationMode = engine.GrantAllow }

// Host is a real engine on a real database.
type Host struct {
	T testing.TB
	E *engine.Engine
	// API is E with authoring, as engine/daemon composes them: every
	// method of api.API.
	API    api.API
	DB     *storage.DB
	Clock  *Clock
	Root   string // the files and sheets connectors' root
	Dir    string // the temp dir holding keep.db and Root
	DBPath string
	Cfg    config.Config
	Sink   engine.EventSink
	opts   Opts
}

// New opens dir/keep.db and an engine on it; it is closed when the test ends.
func New(tb testing.TB, o Opts) *Host {
	tb.Helper()
	dir := tb.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		tb.Fatal(err)
	}
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{root}
	cfg.Connectors.Sheets.Roots = []string{root}
	for _, edit := range o.Config {
		edit(&cfg)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Host{T: tb, Clock: kit.NewClock(o.Start), Root: root, Dir: dir,
		DBPath: filepath.Join(dir, "keep.db"), Cfg: cfg, opts: o}
	h.open()
	return h
}

func (h *Host) now() func() time.Time {
	if h.opts.SystemClock {
		return time.Now
	}
	return h.Clock.Now
}

func (h *Host) open() {
	tb := h.T
	tb.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: h.DBPath, Logger: h.opts.Logger})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	// notify.send reaches the engine's screens, as in keep (engine/daemon)
	front := engine.NewSubscribers()
	var reg *connectors.Registry
	if h.opts.Registry != nil {
		reg, err = h.opts.Registry(h.Cfg, h.Clock)
	} else {
		co := engine.ConnectorOpts{Now: h.now(), Notify: front.NotifySend}
		if h.opts.ConnectorsOnSystemClock {
			co.Now = nil
		}
		reg, err = engine.Connectors(h.Cfg, co)
	}
	if err != nil {
		tb.Fatal(err)
	}
	eo := engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), Now: h.now(), Logger: h.opts.Logger,
		Repairer: h.opts.Repairer, Subscribers: front}
	if h.opts.Events != nil {
		h.Sink = h.opts.Events(db, h.now())
		eo.Events = h.Sink
	}
	e, err := engine.New(ctx, eo)
	if err != nil {
		tb.Fatal(err)
	}
	h.DB, h.E = db, e
	h.API = whole{e, authoring.Author{E: e}}
}

// whole is the run loop with authoring, as engine/daemon composes them.
type whole struct {
	*engine.Engine
	authoring.Author
}

// Reopen simulates a restart: a new engine on the same file.
func (h *Host) Reopen() {
	h.T.Helper()
	h.DB.Close()
	h.open()
}

// Deploy deploys src as name ("name" or "name.js").
func (h *Host) Deploy(name string, src []byte) *api.DeployResult {
	h.T.Helper()
	if !strings.HasSuffix(name, ".js") {
		name += ".js"
	}
	res, err := h.E.Deploy(context.Background(), name, src, "")
	if err != nil {
		h.T.Fatalf("deploy %s: %v", name, err)
	}
	return res
}

// Drain runs everything due now.
func (h *Host) Drain() {
	h.T.Helper()
	if err := h.E.Drain(context.Background()); err != nil {
		h.T.Fatalf("drain: %v", err)
	}
}

// DrainUntilQuiet advances the clock to each next due time and drains,
// until nothing is scheduled within the horizon.
func (h *Host) DrainUntilQuiet(horizon time.Duration) {
	h.T.Helper()
	kit.DrainUntilQuiet(h.T, h.Clock, horizon, h.Drain, func() (*time.Time, error) { return h.E.NextDue(context.Background()) })
}

// Write writes a file under the root, making its directories.
func (h *Host) Write(rel, content string) {
	h.T.Helper()
	p := filepath.Join(h.Root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.T.Fatal(err)
	}
}

// Read returns a file under the root, "" if it is missing.
func (h *Host) Read(rel string) string {
	h.T.Helper()
	data, err := os.ReadFile(filepath.Join(h.Root, rel))
	if err != nil {
		return ""
	}
	return string(data)
}

// Remove removes a file under the root.
func (h *Host) Remove(rel string) error {
	return os.Remove(filepath.Join(h.Root, rel))
}

func (h *Host) Runs(wf string) []api.RunView {
	h.T.Helper()
	rs, err := h.E.Runs(context.Background(), wf, api.Page{Limit: 1000})
	if err != nil {
		h.T.Fatal(err)
	}
	return rs
}

func (h *Host) Events(wf, topic string) []api.EventView {
	h.T.Helper()
	evs, err := h.E.Events(context.Background(), wf, api.EventFilter{Topic: topic, Limit: 1000})
	if err != nil {
		h.T.Fatal(err)
	}
	return evs
}

func (h *Host) Mutations(wf string) []api.MutationView {
	h.T.Helper()
	ms, err := h.E.Mutations(context.Background(), wf, "")
	if err != nil {
		h.T.Fatal(err)
	}
	return ms
}

func (h *Host) Inputs(wf string) []api.InputView {
	h.T.Helper()
	ins, err := h.E.Inputs(context.Background(), wf, api.Page{Limit: 1000})
	if err != nil {
		h.T.Fatal(err)
	}
	return ins
}

func (h *Host) Workflow(name string) *api.WorkflowDetail {
	h.T.Helper()
	d, err := h.E.Workflow(context.Background(), name)
	if err != nil {
		h.T.Fatal(err)
	}
	return d
}

func (h *Host) Attention() []api.AttentionItem {
	h.T.Helper()
	items, err := h.E.Attention(context.Background())
	if err != nil {
		h.T.Fatal(err)
	}
	return items
}

// WorkflowID is the ledger id of a deployed workflow.
func (h *Host) WorkflowID(name string) int64 {
	h.T.Helper()
	w, err := h.DB.Read().WorkflowByName(context.Background(), name)
	if err != nil {
		h.T.Fatal(err)
	}
	return w.ID
}

// Healthy fails the test if any run of wf failed or paused, or anything
// waits on the user.
func (h *Host) Healthy(wf string) {
	h.T.Helper()
	for _, r := range h.Runs(wf) {
		if strings.HasPrefix(string(r.Status), "failed") || strings.HasPrefix(string(r.Status), "paused") {
			h.T.Errorf("run %s of %s: %s in %s: %s", r.ID, r.Handler, r.Status, r.Phase, r.Error)
		}
	}
	for _, a := range h.Attention() {
		h.T.Errorf("attention: %s %s: %s (%s)", a.Kind, a.Workflow, a.Title, a.Reason)
	}
}
