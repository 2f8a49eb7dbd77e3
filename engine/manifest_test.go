package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"
	"keep/engine/api"
	"keep/sandbox"
	"keep/storage"
)

// Every method of every connector keep offers, spelled with computed names
// (the red-team's rewrite), is refused at validate, with where it is.
func TestEveryConnectorByComputedNameIsRefusedAtValidate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	n := 0
	for _, m := range b.e.loadOptions().Methods {
		n++
		conn := fmt.Sprintf(`ctx[["%s"].join("")]`, m.Connector)
		if mcp, ok := strings.CutPrefix(m.Connector, "mcp."); ok {
			conn = fmt.Sprintf(`ctx.mcp["%s" + ""]`, mcp)
		}
		src := fmt.Sprintf(`export default Keep.workflow({ name: "w", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { return { reservations: [], data: {} }; },
    async mutate(ctx) { const F = "%s".slice(0); await %s[F]({}); },
    async next() {} }) } });`, m.Method, conn)
		_, err := b.e.Validate("w.js", []byte(src))
		var ve *sandbox.ValidationError
		if !errors.As(err, &ve) || ve.Diagnostics[0].Line != 4 || !strings.Contains(err.Error(), "cannot follow") {
			t.Errorf("%s.%s by computed names: err = %v, want a refusal at w.js:4", m.Connector, m.Method, err)
		}
	}
	if n < 10 {
		t.Fatalf("only %d methods were tried", n)
	}
}

// A version whose manifest lacks a call (as if the analysis had missed it)
// cannot make it: every read of every connector is refused where it
// arrives at the host, a logic error, and the connector is not called.
func TestEveryReadOutsideTheManifestIsRefusedAtRunTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("secret.txt", "private")
	b.deploy("notes", notesWorkflow)
	w, err := b.db.Read().WorkflowByName(context.Background(), "notes")
	if err != nil {
		t.Fatal(err)
	}
	b.lackManifest(w.ID, w.Version, &sandbox.Manifest{})
	n := 0
	for _, name := range b.e.reg.Names() {
		conn, _ := b.e.reg.Get(name)
		for _, m := range conn.Methods() {
			if m.Kind == connectors.Mutate {
				continue
			}
			n++
			tr := b.e.newTrace()
			h := &host{e: b.e, wf: w, phase: sandbox.PhaseProducer, tr: tr}
			res, err := h.Read(context.Background(), name, m.Name, map[string]any{"path": "secret.txt", "dir": ".", "url": "http://127.0.0.1:9/"})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "not in this version's manifest") || res != nil {
				t.Errorf("%s.%s: %v, %v; want a logic error naming the manifest", name, m.Name, res, err)
			}
			if len(tr.entries) != 1 || tr.entries[0].Result != "" {
				t.Errorf("%s.%s: trace %+v", name, m.Name, tr.entries)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d reads were tried", n)
	}
}

// lackManifest makes the engine run a version under m, as if m were what
// was stored with it.
func (b *bundle) lackManifest(workflowID int64, version int, m *sandbox.Manifest) {
	b.t.Helper()
	sc, err := b.e.script(context.Background(), workflowID, version)
	if err != nil {
		b.t.Fatal(err)
	}
	cp := *sc
	cp.Manifest = m
	b.e.mu.Lock()
	b.e.scripts[scriptKey{workflowID, version}] = &cp
	b.e.mu.Unlock()
}

// A mutation outside the running version's manifest fails its run as a
// logic error before any ledger row: nothing is written.
func TestAMutationOutsideTheManifestIsNotMade(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	b.write("inbox/a.txt", "alpha")
	b.deploy("notes", notesWorkflow)
	w, err := b.db.Read().WorkflowByName(context.Background(), "notes")
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := b.e.script(context.Background(), w.ID, w.Version)
	m := *sc.Manifest
	m.Calls = nil
	for _, c := range sc.Manifest.Calls {
		if c.Name() != "files.append" {
			m.Calls = append(m.Calls, c)
		}
	}
	b.lackManifest(w.ID, w.Version, &m)
	b.drain()
	if got := b.read("log.csv"); got != "" {
		t.Fatalf("log.csv = %q: a call outside the manifest was made", got)
	}
	if ms := b.mutations("notes"); len(ms) != 0 {
		t.Fatalf("mutations %+v, want none", ms)
	}
	failed := false
	for _, r := range b.runs("notes") {
		if r.Handler == "logNote" && r.Status == RunFailedLogic && strings.Contains(r.Error, "ctx.files.append is not in this version's manifest") {
			failed = true
		}
	}
	if !failed {
		t.Fatalf("runs %+v, want logNote failed naming the manifest", b.runs("notes"))
	}
}

// A URL built at run time (join) to a host the source does not name is
// refused where the call arrives, and the host never hears of it; the
// host the source names is reached.
func TestAURLToAHostTheSourceDoesNotNameIsRefused(t *testing.T) {
	t.Parallel()
	var named, other atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { named.Add(1); w.Write([]byte("{}")) }))
	defer ok.Close()
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1); w.Write([]byte("{}")) }))
	defer evil.Close()
	port := evil.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	b := setup(t)
	b.deploy("w", fmt.Sprintf(`export default Keep.workflow({ name: "w", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      await ctx.http.get({ url: "%s/ok" });
      const port = [%s].map(String).join("");
      await ctx.http.get({ url: ["http:", "", "127.0.0.1:" + port, "steal"].join("/") });
      return { reservations: [], data: {} };
    },
    async mutate() {}, async next() {} }) } });`, ok.URL, strings.Join(strings.Split(port, ""), ", ")))
	b.drain()
	if named.Load() == 0 || other.Load() != 0 {
		t.Fatalf("the named host got %d requests, the other %d; want some and none", named.Load(), other.Load())
	}
	runs := b.runs("w")
	if len(runs) == 0 || runs[0].Status != RunFailedLogic || !strings.Contains(runs[0].Error, "is not among the hosts this version's source names") {
		t.Fatalf("runs %+v, want the run failed on the host", runs)
	}
}

// The manifest is stored with the version as JSON, and is what the engine
// holds a run to after a restart.
func TestTheManifestIsStoredWithTheVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	b.deploy("notes", notesWorkflow)
	v, err := b.db.Read().ScriptVersion(context.Background(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var m sandbox.Manifest
	if err := json.Unmarshal(v.Manifest, &m); err != nil {
		t.Fatalf("stored manifest %q: %v", v.Manifest, err)
	}
	var names []string
	for _, c := range m.Calls {
		names = append(names, fmt.Sprintf("%s %s %v", c.Name(), c.Kind, c.Phases))
	}
	want := "files.append mutate [mutate], files.list read [producer], files.read read_by_id [prepare], files.write mutate [mutate]"
	if got := strings.Join(names, ", "); got != want {
		t.Errorf("stored calls %s\nwant %s", got, want)
	}
	// a version stored with a narrower manifest than its source (what the
	// person approved) is held to the stored one, after a restart too
	narrow := sandbox.Manifest{Topics: m.Topics}
	for _, c := range m.Calls {
		if c.Name() != "files.append" {
			narrow.Calls = append(narrow.Calls, c)
		}
	}
	v.Version, v.Label, v.Manifest = 2, "2", narrow.JSON()
	if err := b.db.Write(context.Background(), func(tx *storage.Tx) error {
		if err := tx.AddScriptVersion(context.Background(), *v); err != nil {
			return err
		}
		return tx.SetWorkflowVersion(context.Background(), 1, 2, b.clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	sc, err := b.e.script(context.Background(), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(sc.Manifest.JSON()) != string(narrow.JSON()) || slices.Contains(sc.Capabilities, "files.append") {
		t.Errorf("after a restart the manifest is %s (capabilities %v), want the stored %s", sc.Manifest.JSON(), sc.Capabilities, narrow.JSON())
	}
	b.write("inbox/a.txt", "alpha")
	b.drain()
	if got := b.read("log.csv"); got != "" {
		t.Fatalf("log.csv = %q: the stored manifest was not held", got)
	}
	if !slices.ContainsFunc(b.runs("notes"), func(r api.RunView) bool {
		return r.Handler == "logNote" && strings.Contains(r.Error, "ctx.files.append is not in this version's manifest")
	}) {
		t.Fatalf("runs %+v, want logNote failed on the manifest", b.runs("notes"))
	}
}

// The red-team's repairs. One reaches files.read by computed names through
// an alias: it is refused, never proposed, and the private file is never
// read. One has the deployed version's calls but reads another file: it is
// proposed, its dry run reads nothing for real, and its text says which of
// the workflow's grants it would use.
func TestRepairsReadNothingBeforeTheyAreAccepted(t *testing.T) {
	t.Parallel()
	const secret = "private-do-not-read"
	computed := strings.Replace(notesWorkflow, `const note = await ctx.files.read({ path: ev.payload.path });`,
		`const c = ctx, F = "fil" + "es"; const note = await c[F]["re" + "ad"]({ path: "secret.txt" });`, 1)
	other := strings.Replace(notesWorkflow, `const note = await ctx.files.read({ path: ev.payload.path });`,
		`const note = await ctx.files.read({ path: "secret.txt" });`, 1)
	for name, c := range map[string]struct {
		fixed    string
		proposed bool
	}{"by computed names": {computed, false}, "with the same calls, of another file": {other, true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, allowMutations)
			b.e.repair, _ = commandRepairer(t, c.fixed)
			b.write("secret.txt", secret)
			b.write("inbox/a.txt", "alpha")
			b.deploy("notes", brokenNotes(`throw new Error("bug");`))
			b.drain()
			hist, err := b.e.Proposals(context.Background(), "notes")
			if err != nil {
				t.Fatal(err)
			}
			if !c.proposed {
				w := b.workflow("notes")
				if len(hist) != 0 || w.Block == nil || !strings.Contains(w.Block.Reason, "cannot follow") {
					t.Fatalf("proposals %+v, block %+v: want none, and the block saying why", hist, w.Block)
				}
				return
			}
			if len(hist) != 1 || hist[0].Status != api.ProposalOpen || hist[0].DryRun == nil {
				t.Fatalf("proposals %+v, want one open with a dry run", hist)
			}
			raw, _ := json.Marshal(hist[0])
			if strings.Contains(string(raw), secret) {
				t.Fatalf("the proposal holds the private file: %s", raw)
			}
			for _, r := range hist[0].DryRun.Reads {
				if r.Performed {
					t.Errorf("the dry run performed %s.%s", r.Connector, r.Method)
				}
			}
			text := ProposalText(&hist[0])
			if !strings.Contains(text, "grants it would use: your grant files.append allow, any path, your grant files.write allow, any path") {
				t.Errorf("the proposal does not say which grants it would use:\n%s", text)
			}
		})
	}
}

// keep try reports the manifest of what it tried: the bound, beside what
// this run happened to do.
func TestTryReportsTheManifest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rep, err := TryFile(context.Background(), b.e.reg, b.e.pol, "notes.js", []byte(notesWorkflow), api.TryOptions{CaptureReads: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Manifest == nil || !slices.Equal(rep.Manifest.Names(true), []string{"files.append", "files.write"}) ||
		!slices.Equal(rep.Manifest.Names(false), []string{"files.list", "files.read"}) {
		t.Fatalf("manifest %+v", rep.Manifest)
	}
}
