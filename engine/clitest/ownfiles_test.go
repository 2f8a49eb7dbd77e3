package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine"
	"keep/engine/config"
	"keep/engine/enginetest/kit"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEveryFileKeepWritesIsOutOfAWorkflowsReach drives keep through a
// realistic life (an account signed in, an MCP server's tools cached, a
// feed fetched, a daemon with its socket and lock, a backup restored, the
// service installed), collects every file it wrote under the database's
// and the config's folders by walking them, and checks that no workflow
// can read, list, write, append, move or open as a sheet any of them,
// also through a symlink or a hard link inside its roots: the roots are the
// folder holding both (a person's roots = ["~"]).
func TestEveryFileKeepWritesIsOutOfAWorkflowsReach(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	const mailPassword = "mail-pw-in-service-env"

	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>`+
			`<item><guid>a</guid><title>A</title><link>http://x/a</link></item></channel></rss>`)
	}))
	t.Cleanup(feed.Close)
	srv := sdk.NewServer(&sdk.Implementation{Name: "svc", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "find", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "[]"}}}, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(mcpSrv.Close)

	e.writeConfig(fmt.Sprintf(`[policy]
default_mutation_mode = "allow"

[connectors.files]
roots = [%[1]q]

[connectors.sheets]
roots = [%[1]q]

[connectors.mail]
username = "ann@example.com"

[accounts.mail]
kind = "password"
username = "ann@example.com"

[mcp.svc]
url = %[2]q
reads = ["find"]
`, e.dir, mcpSrv.URL))

	// credentials.json (and its lock) beside the config
	login := e.command(context.Background(), "auth", "login", "mail")
	login.Stdin = strings.NewReader("account-pw\n")
	if r := runCmd(t, login); r.code != 0 {
		t.Fatalf("auth login: %s", r)
	}
	// the MCP tool-list cache beside the database
	e.ok("mcp", "tools", "svc")
	// the feeds cache, the database with its WAL, the engine lock, keep.log
	e.ok("deploy", e.file(e.root, "feed.js", `export default Keep.workflow({ name: "feed", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const items = await ctx.feed.items({ url: "`+feed.URL+`/rss" }); console.log("items " + items.length);
  } } } });`))
	e.ok("drain")
	// the daemon's socket and lock, collected while it runs
	d := startDaemon(t, e)
	awaitSocket(t, e, d, time.Minute)
	seen := map[string]bool{}
	collect := func() {
		for _, dir := range []string{filepath.Dir(e.db), filepath.Dir(e.config)} {
			filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
				if err != nil || p == dir {
					return nil
				}
				if de.IsDir() && (p == e.root || strings.HasPrefix(p, filepath.Join(e.dir, "xdg-")) || p == filepath.Dir(e.db)) {
					return filepath.SkipDir // the person's root, the test's fake $HOME parts
				}
				if !de.IsDir() {
					seen[p] = true
				}
				return nil
			})
		}
	}
	collect()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := kit.Wait(t, d.exited, kit.Timeout*6); err != nil {
		t.Fatalf("daemon exit after SIGTERM: %v", err)
	}
	// a backup restored: keep.db.before-restore beside the database
	backup := filepath.Join(e.root, "backup.db")
	e.ok("backup", backup)
	e.ok("restore", backup)
	os.Remove(backup)
	// service.env beside the config, with the mail password in clear
	fake := filepath.Join(e.dir, "xdg-fakebin")
	if err := os.MkdirAll(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "systemctl"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	install := e.command(context.Background(), "service", "install")
	install.Env = append(install.Env, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "KEEP_MAIL_PASSWORD="+mailPassword)
	if r := runCmd(t, install); r.code != 0 {
		t.Fatalf("service install: %s", r)
	}
	collect()

	var files []string
	for p := range seen {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, want := range []string{e.db, e.db + "-wal", e.db + ".lock", e.db + ".sock", e.db + ".before-restore",
		filepath.Join(filepath.Dir(e.db), "keep.log"), e.config, filepath.Join(e.dir, "credentials.json"), filepath.Join(e.dir, "service.env")} {
		if !seen[want] {
			t.Errorf("keep did not write %s in this run (the test no longer covers it); it wrote:\n%s", want, strings.Join(files, "\n"))
		}
	}
	// the caches are found by what they hold, wherever keep puts them
	var feeds, tools bool
	var cacheRel string
	for _, f := range files {
		feeds = feeds || strings.Contains(f, "feeds"+string(filepath.Separator))
		if strings.HasSuffix(f, ".tools.json") {
			tools = true
			cacheRel, _ = filepath.Rel(e.dir, f)
		}
	}
	if !feeds || !tools {
		t.Fatalf("the feeds cache (%v) and the MCP cache (%v) were not both written:\n%s", feeds, tools, strings.Join(files, "\n"))
	}

	// the red-team's two cases, as workflows: service.env read in clear,
	// the MCP cache rewritten
	envRel, _ := filepath.Rel(e.dir, filepath.Join(e.dir, "service.env"))
	cacheBefore, _ := os.ReadFile(filepath.Join(e.dir, cacheRel))
	e.ok("deploy", e.file(e.root, "steal.js", `export default Keep.workflow({ name: "steal", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const r = await ctx.files.read({ path: `+quoted(envRel)+` }); console.log("GOT " + r.content);
  } } } });`))
	e.ok("deploy", e.file(e.root, "rewrite.js", mutateOnce("rewrite", `ctx.files.write({ path: `+quoted(cacheRel)+`, content: "{}" })`)))
	e.ok("drain")
	if logs := e.keep("logs", "steal"); strings.Contains(logs.stdout, mailPassword) || !strings.Contains(logs.stdout, "keep's own files") {
		t.Errorf("steal's trace:\n%s", logs)
	}
	if after, _ := os.ReadFile(filepath.Join(e.dir, cacheRel)); string(after) != string(cacheBefore) {
		t.Errorf("the MCP tool-list cache was rewritten: %s", after)
	}

	// every file, every way a workflow reaches a path, in-process through
	// the connectors the engine builds from the same config
	cfg, err := config.Load(e.config, true)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: e.db, ConfigPath: e.config,
		Account: func(string) (connectors.Account, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	fc, _ := reg.Get("files")
	sc, _ := reg.Get("sheets")
	ctx := context.Background()
	refused := func(c connectors.Connector, method string, params map[string]any) {
		t.Helper()
		res, err := c.Do(ctx, connectors.Call{Method: method, Params: params, IdempotencyKey: "k"})
		if connectors.ClassOf(err) != connectors.Permission || !strings.Contains(fmt.Sprint(err), "keep's own files") {
			t.Errorf("%s.%s(%v) = %v, %v; want refused as keep's own", c.Name(), method, params, clip(fmt.Sprint(res)), err)
		}
	}
	e.file(e.root, "mine.txt", "mine")
	before := map[string][]byte{}
	for i, f := range files {
		b, _ := os.ReadFile(f)
		before[f] = b
		rel, _ := filepath.Rel(e.dir, f)
		refused(fc, "read", map[string]any{"path": rel})
		refused(fc, "write", map[string]any{"path": rel, "content": "x"})
		refused(fc, "append", map[string]any{"path": rel, "content": "x"})
		refused(fc, "move", map[string]any{"from": rel, "to": fmt.Sprintf("root/stolen-%d", i)})
		refused(fc, "move", map[string]any{"from": "root/mine.txt", "to": rel})
		refused(sc, "rows", map[string]any{"spreadsheet": rel})
		refused(sc, "appendRow", map[string]any{"spreadsheet": rel, "values": []any{"x"}})
		sym := filepath.Join(e.root, fmt.Sprintf("sym-%d", i))
		if err := os.Symlink(f, sym); err != nil {
			t.Fatal(err)
		}
		refused(fc, "read", map[string]any{"path": "root/" + filepath.Base(sym)})
		refused(fc, "write", map[string]any{"path": "root/" + filepath.Base(sym), "content": "x"})
		refused(sc, "rows", map[string]any{"spreadsheet": "root/" + filepath.Base(sym)})
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			hard := filepath.Join(e.root, fmt.Sprintf("hard-%d", i))
			if err := os.Link(f, hard); err != nil {
				t.Fatal(err)
			}
			refused(fc, "read", map[string]any{"path": "root/" + filepath.Base(hard)})
			refused(fc, "append", map[string]any{"path": "root/" + filepath.Base(hard), "content": "x"})
			refused(sc, "appendRow", map[string]any{"spreadsheet": "root/" + filepath.Base(hard), "values": []any{"x"}})
		}
	}
	for _, dir := range []string{".", filepath.Base(filepath.Dir(e.db)), filepath.Base(filepath.Dir(e.db)) + "/" + filepath.Base(e.db) + ".mcp"} {
		res, err := fc.Do(ctx, connectors.Call{Method: "list", Params: map[string]any{"dir": dir}})
		if err != nil && connectors.ClassOf(err) != connectors.Permission {
			t.Errorf("list %s: %v", dir, err)
		}
		j, _ := json.Marshal(res)
		for _, f := range files {
			if strings.Contains(string(j), `"`+filepath.Base(f)+`"`) {
				t.Errorf("list %s shows keep's %s: %s", dir, f, j)
			}
		}
	}
	for _, f := range files {
		if after, err := os.ReadFile(f); err == nil && string(after) != string(before[f]) && !strings.HasSuffix(f, "keep.log") {
			t.Errorf("%s changed", f)
		}
	}
	if got, err := os.ReadFile(filepath.Join(e.root, "mine.txt")); err != nil || string(got) != "mine" {
		t.Errorf("the person's own file: %q %v", got, err)
	}
}

func quoted(s string) string { b, _ := json.Marshal(filepath.ToSlash(s)); return string(b) }

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// mutateOnce publishes one event; its consumer's mutate makes CALL.
func mutateOnce(name, call string) string {
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
