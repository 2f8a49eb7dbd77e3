package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// ownFiles is keep's database and config inside the roots a user set to a
// folder holding them (roots = ["~"]), with a workflow engine on them.
type ownFiles struct {
	t        *testing.T
	e        *Engine
	root     string
	dbPath   string
	cfgPath  string
	password string
}

func setupOwnFiles(t *testing.T) *ownFiles {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	o := &ownFiles{t: t, root: root, dbPath: filepath.Join(root, "data", "keep.db"),
		cfgPath: filepath.Join(root, "cfg", "config.toml"), password: "hunter2-literal"}
	for _, d := range []string{"data", "cfg"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	text := "[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [" + quote(root) + "]\n\n" +
		"[connectors.sheets]\nroots = [" + quote(root) + "]\n\n[connectors.mail]\npassword = " + quote(o.password) + "\n"
	if err := os.WriteFile(o.cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cfg", "credentials.json"), []byte(`{"token":"`+o.password+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(o.cfgPath, true)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, storage.Opts{Path: o.dbPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg, err := Connectors(cfg, ConnectorOpts{DBPath: o.dbPath, ConfigPath: o.cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	c := kit.NewClock(time.Time{})
	o.e, err = New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(cfg.Policy), Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// mutateWorkflow publishes one event; its consumer's mutate makes CALL.
func mutateWorkflow(name, call string) string {
	return strings.NewReplacer("NAME", name, "CALL", call).Replace(`export default Keep.workflow({
  name: "NAME", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "one" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await CALL; },
    async next() {} }) },
});`)
}

func TestKeepOwnFilesAreOutOfEveryWorkflowsReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := setupOwnFiles(t)
	// a link inside the root to the database, and the database reached
	// through "..": both are the same file
	if err := os.Symlink(o.dbPath, filepath.Join(o.root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(o.root, "cfg", "config.toml"), filepath.Join(o.root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	configBefore, _ := os.ReadFile(o.cfgPath)

	reads := map[string]string{
		`ctx.files.read({ path: "cfg/config.toml" })`:              "beside keep's config",
		`ctx.files.read({ path: "cfg/credentials.json" })`:         "beside keep's config",
		`ctx.files.read({ path: "data/keep.db" })`:                 "beside keep's database",
		`ctx.files.read({ path: "data/x/../keep.db-wal" })`:        "beside keep's database",
		`ctx.files.read({ path: "innocent.txt" })`:                 "beside keep's database",
		`ctx.files.read({ path: "hard.txt" })`:                     "beside keep's config",
		`ctx.files.read({ path: "data/keep.log" })`:                "beside keep's database",
		`ctx.sheets.rows({ spreadsheet: "cfg/config.toml" })`:      "beside keep's config",
		`ctx.sheets.rows({ spreadsheet: "cfg/credentials.json" })`: "beside keep's config",
	}
	if err := os.WriteFile(filepath.Join(o.root, "data", "keep.log"), []byte("log"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a folder beside the database is the person's (the demo's is one)
	if err := os.MkdirAll(filepath.Join(o.root, "data", "demo"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.root, "data", "demo", "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a refused permission fails the run whether or not the script catches
	// it, so each probe is a workflow of its own
	i := 0
	readers := map[string]string{}
	for call := range reads {
		i++
		name := fmt.Sprintf("reader%d", i)
		readers[name] = call
		src := `export default Keep.workflow({ name: "` + name + `", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ` + call + `; console.log("READ OK " + JSON.stringify(r));
  } } } });`
		if _, err := o.e.Deploy(ctx, name+".js", []byte(src), ""); err != nil {
			t.Fatal(err)
		}
	}
	lister := `export default Keep.workflow({ name: "lister", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const names = (await ctx.files.list({ dir: "data" })).concat(await ctx.files.list({ dir: "cfg" }), await ctx.files.list({ dir: "data/demo" })).map(f => f.name);
    console.log("LISTED " + JSON.stringify(names));
  } } } });`
	if _, err := o.e.Deploy(ctx, "lister.js", []byte(lister), ""); err != nil {
		t.Fatal(err)
	}
	mutations := map[string]string{
		"write":     `ctx.files.write({ path: "data/keep.db", content: "not a database" })`,
		"append":    `ctx.files.append({ path: "cfg/config.toml", content: "\n[policy]\n" })`,
		"plant-wal": `ctx.files.write({ path: "data/keep.db-wal", content: "junk" })`,
		"move-from": `ctx.files.move({ from: "data/keep.db", to: "stolen.db" })`,
		"move-dir":  `ctx.files.move({ from: "data", to: "elsewhere" })`,
		"move-to":   `ctx.files.move({ from: "data/demo/notes.txt", to: "data/keep.db-shm" })`,
		"sheet":     `ctx.sheets.appendRow({ spreadsheet: "cfg/credentials.json", row: { a: "1" } })`,
	}
	for name, call := range mutations {
		if _, err := o.e.Deploy(ctx, name+".js", []byte(mutateWorkflow(name, call)), ""); err != nil {
			t.Fatalf("deploy %s: %v", name, err)
		}
	}
	if err := o.e.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	trace := func(wf string) ([]api.TraceLine, string) {
		t.Helper()
		runs, err := o.e.Runs(ctx, wf, api.Page{Limit: 10})
		if err != nil || len(runs) == 0 {
			t.Fatalf("%s runs: %v %v", wf, runs, err)
		}
		lines, err := o.e.Trace(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, l := range lines {
			j, _ := json.Marshal(l)
			b.Write(j)
			b.WriteByte('\n')
		}
		return lines, b.String()
	}
	for name, call := range readers {
		why := reads[call]
		lines, tr := trace(name)
		if strings.Contains(tr, o.password) || strings.Contains(tr, "READ OK") {
			t.Errorf("%s: keep's own file was read:\n%s", call, tr)
			continue
		}
		found := false
		for _, l := range lines {
			if l.Kind == "call" && strings.Contains(call, l.Connector+"."+l.Method) && strings.Contains(l.Error, why) &&
				strings.Contains(l.Error, "no workflow may read or change keep's own files") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no call in the trace refused as %q:\n%s", call, why, tr)
		}
	}
	if _, tr := trace("lister"); !strings.Contains(tr, `LISTED [\"notes.txt\"]`) {
		t.Errorf("listing data/, cfg/ and data/demo should show only demo's notes.txt:\n%s", tr)
	}

	for name := range mutations {
		ms, err := o.e.Mutations(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || ms[0].Status == "applied" || !strings.Contains(ms[0].Error, "keep's own files") {
			t.Errorf("%s: mutations = %+v, want one refused naming keep's own files", name, ms)
		}
	}
	if after, _ := os.ReadFile(o.cfgPath); !bytes.Equal(after, configBefore) {
		t.Errorf("config changed:\n%s", after)
	}
	for _, p := range []string{"stolen.db", "elsewhere", "data/demo/notes.txt.x"} {
		if _, err := os.Lstat(filepath.Join(o.root, p)); err == nil {
			t.Errorf("%s exists: a move took keep's files", p)
		}
	}
	if _, err := os.Stat(filepath.Join(o.root, "data", "demo", "notes.txt")); err != nil {
		t.Errorf("notes.txt was moved onto keep's shm name: %v", err)
	}
	// the ledger is whole
	if head, err := os.ReadFile(o.dbPath); err != nil || !bytes.HasPrefix(head, []byte("SQLite format 3\x00")) {
		t.Fatalf("keep.db is no longer a database: %v", err)
	}
	if wfs, err := o.e.Workflows(ctx); err != nil || len(wfs) != 1+len(reads)+len(mutations) {
		t.Fatalf("workflows after the attempts = %d, %v", len(wfs), err)
	}
}
