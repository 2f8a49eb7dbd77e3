package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"keep/engine/api"
)

func TestHelpAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	all := e.ok("help", "api").stdout
	for _, want := range []string{"PHASES", "ctx.registerInput", "ctx.publish", "ctx.peek", "ctx.getByIds", "console",
		"ctx.files.write({ path: string, content: string }) → { path: string, size: number }", "mutate, in mutate",
		"ctx.http.get(", "read, in producer, prepare", "outcome unknown?", "e.g. await ctx.slack.post("} {
		if !strings.Contains(all, want) {
			t.Errorf("keep help api lacks %q", want)
		}
	}
	slack := e.ok("help", "api", "slack").stdout
	if !strings.Contains(slack, "ctx.slack.post(") || strings.Contains(slack, "ctx.files.write(") || !strings.Contains(slack, "PHASES") {
		t.Errorf("keep help api slack:\n%s", slack)
	}
	var ref struct {
		Connectors []struct {
			Name    string `json:"name"`
			Methods []struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"methods"`
		} `json:"connectors"`
	}
	if err := json.Unmarshal([]byte(e.ok("help", "api", "files", "--json").stdout), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Connectors) != 1 || ref.Connectors[0].Name != "files" || len(ref.Connectors[0].Methods) != 5 {
		t.Errorf("keep help api files --json = %+v", ref)
	}
	if r := e.expect(2, "help", "api", "nosuch"); !strings.Contains(r.stderr, "known: ") {
		t.Errorf("an unknown connector: %s", r)
	}
}

func TestInitWritesTypeDeclarations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	dir := filepath.Join(e.dir, "fresh")
	e.raw("init", dir)
	dts, err := os.ReadFile(filepath.Join(dir, "workflows", "keep.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"declare namespace Keep", "interface ProducerCtx", "interface MutateCtx", "files: FilesMutations;",
		"declare const Keep:"} {
		if !strings.Contains(string(dts), want) {
			t.Errorf("keep.d.ts lacks %q", want)
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "workflows", "jsconfig.json"))
	if err != nil || !strings.Contains(string(js), `"checkJs": true`) {
		t.Errorf("jsconfig.json: %v\n%s", err, js)
	}
}

// keep init on a setup that has a config (an older keep's) writes keep.d.ts
// again and says so, exits 0, and leaves the person's config and workflows
// as they are: edited stays edited, removed stays removed.
func TestInitAgainRefreshesOnlyWhatKeepGenerates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	dir := filepath.Join(e.dir, "setup")
	e.ok("init", dir)
	wfDir := filepath.Join(dir, "workflows")
	dtsPath := filepath.Join(wfDir, "keep.d.ts")
	current, err := os.ReadFile(dtsPath)
	if err != nil {
		t.Fatal(err)
	}
	// the person's changes, and an older keep's declarations
	config := filepath.Join(dir, "config.toml")
	mine := map[string]string{
		config:                                "# mine\n[policy]\ndefault_mutation_mode = \"allow\"\n",
		filepath.Join(wfDir, "demo.js"):       "// mine\n",
		filepath.Join(wfDir, "jsconfig.json"): "{}\n",
	}
	for p, text := range mine {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed := filepath.Join(wfDir, "notes-to-csv.js")
	if err := os.Remove(removed); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dtsPath, []byte("// keep.d.ts of an older keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, wfDir)

	r := e.ok("init", dir)
	if !strings.Contains(r.stdout, "refreshed "+dtsPath) || !strings.Contains(r.stdout, "kept "+config) {
		t.Errorf("keep init again does not say what it did:\n%s", r)
	}
	if got, _ := os.ReadFile(dtsPath); string(got) != string(current) {
		t.Errorf("keep.d.ts was not refreshed:\n%.300s", got)
	}
	for p, text := range mine {
		if got, _ := os.ReadFile(p); string(got) != text {
			t.Errorf("keep init again changed %s: %q", p, got)
		}
	}
	if after := listDir(t, wfDir); !slices.Equal(after, before) {
		t.Errorf("keep init again changed the workflows folder: %v, was %v", after, before)
	}

	// up to date: said, and nothing written
	if r := e.ok("init", dir); !strings.Contains(r.stdout, "kept "+dtsPath+" (up to date)") {
		t.Errorf("keep init a third time:\n%s", r)
	}

	// the same through --config, without DIR
	if err := os.WriteFile(dtsPath, []byte("// stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.raw("--config", config, "init"); r.code != 0 || !strings.Contains(r.stdout, "refreshed "+dtsPath) {
		t.Errorf("keep --config CONFIG init: %s", r)
	}
	if got, _ := os.ReadFile(dtsPath); string(got) != string(current) {
		t.Errorf("keep.d.ts was not refreshed through --config")
	}

	// a config that does not load: named, and nothing written beside it
	broken := "[policy\n"
	if err := os.WriteFile(config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dtsPath, []byte("// stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.raw("init", dir); r.code != 1 || !strings.Contains(r.stderr, config) {
		t.Errorf("keep init on a broken config: %s", r)
	}
	if got, _ := os.ReadFile(dtsPath); string(got) != "// stale\n" {
		t.Errorf("keep init on a broken config wrote keep.d.ts")
	}
	if got, _ := os.ReadFile(config); string(got) != broken {
		t.Errorf("keep init changed a broken config: %q", got)
	}
}

// listDir is the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

// sink is a service: GET /items lists two items, anything else fails the test.
func sink(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("keep try sent %s %s to the service", r.Method, r.URL)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"id":"a1","title":"Alpha"},{"id":"b2","title":"Beta"}]`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func hookWorkflow(base string) string {
	return `export default Keep.workflow({
  name: "hook",
  topics: { "item.found": {} },
  producers: {
    poll: { publishes: ["item.found"], schedule: { interval: "1h" }, handler: async (ctx) => {
      const { json } = await ctx.http.get({ url: "` + base + `/items" });
      for (const it of json) {
        const inputId = ctx.registerInput({ source: "http", type: "resource", id: it.id, title: "Item " + it.title });
        await ctx.publish("item.found", { messageId: it.id, inputId, payload: it });
      }
    } },
  },
  consumers: {
    post: Keep.consumer({
      subscribe: ["item.found"],
      async prepare(ctx) {
        const [e] = await ctx.peek("item.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "item.found", ids: [e.messageId] }], data: e.payload, ui: { title: "Post " + e.payload.title } };
      },
      async mutate(ctx, p) { await ctx.http.request({ method: "POST", url: "` + base + `/hook", json: p.data }); },
      async next() {},
    }),
  },
});
`
}

func TestTry(t *testing.T) {
	t.Parallel()
	srv := sink(t)
	e := newEnv(t, "ask")
	wf := e.file(e.dir, "hook.js", hookWorkflow(srv.URL))
	e.ok("deploy", wf)
	dbFiles := []string{e.db, e.db + "-wal", e.db + "-shm"}
	before := map[string][]byte{}
	for _, p := range dbFiles {
		before[p], _ = os.ReadFile(p)
	}

	rep := jsonOf[api.TryReport](e, "try", wf)
	if len(rep.Inputs) != 2 || len(rep.Mutations) != 2 || len(rep.Runs) == 0 {
		t.Fatalf("report: %d inputs, %d mutations, %d runs", len(rep.Inputs), len(rep.Mutations), len(rep.Runs))
	}
	m := rep.Mutations[0]
	if m.Connector != "http" || m.Method != "request" || !strings.Contains(string(m.Params), srv.URL+"/hook") ||
		len(m.CausedBy) != 1 || !m.NeedsApproval {
		t.Errorf("captured mutation = %+v", m)
	}
	text := e.ok("try", wf, "--limit", "1").stdout
	for _, want := range []string{"mutations it would make (1)", "http.request  POST " + srv.URL + "/hook", "for: Item Alpha",
		"waits for your approval", "stopped at the limit", "[producer] http.get(", "nothing was changed"} {
		if !strings.Contains(text, want) {
			t.Errorf("keep try lacks %q:\n%s", want, text)
		}
	}
	for _, p := range dbFiles {
		if now, _ := os.ReadFile(p); string(now) != string(before[p]) {
			t.Errorf("%s changed during keep try", p)
		}
	}
	if runs := jsonOf[[]api.RunView](e, "runs", "hook"); len(runs) != 0 {
		t.Errorf("the real database has runs after keep try: %+v", runs)
	}
	if r := e.expect(1, "try", wf, "--producer", "nosuch"); !strings.Contains(r.stderr, `no producer "nosuch"`) {
		t.Errorf("an unknown producer: %s", r)
	}
}

// fakeModel answers POST /v1/chat/completions as an OpenAI-compatible
// server does, with the drafts in turn, and keeps every request.
type fakeModel struct {
	t      *testing.T
	drafts []string
	mu     sync.Mutex
	reqs   []chatRequest
}

// requests is every request so far.
func (f *fakeModel) requests() []chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// answer makes drafts the model's next answers.
func (f *fakeModel) answer(drafts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drafts = drafts
}

type chatRequest struct {
	auth  string
	Model string `json:"model"`
	Msgs  []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Content-Type") != "application/json" {
		f.t.Errorf("request %s %s (%s), want POST /v1/chat/completions with JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.auth = r.Header.Get("Authorization")
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	draft := f.drafts[min(n, len(f.drafts)-1)]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1763900000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": "Here is the workflow:\n\n```javascript\n" + draft + "```\n"}}},
		"usage": map[string]any{"prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300},
	})
}

const draftBroken = `// @ts-check
export default Keep.workflow({
  name: "notes-log",
  topics: { "note.found": {} },
  producers: {
    scan: { publishes: ["note.seen"], schedule: { interval: "5m" }, handler: async (ctx) => {} },
  },
});
`

// draftFixed is engine/testdata/notes.js as a model would draft it: named
// notes-log, polling every 5 minutes, appending line.
func draftFixed(line string) string {
	src, err := os.ReadFile("../testdata/notes.js")
	if err != nil {
		panic(err)
	}
	return "// @ts-check\n// notes-log: one line of log.txt per note in inbox/.\n" + strings.NewReplacer(
		`name: "notes"`, `name: "notes-log"`,
		`interval: "1h"`, `interval: "5m"`,
		`p.data.name + "\n"`, line,
	).Replace(string(src))
}

func llmEnv(t *testing.T, drafts ...string) (*env, *fakeModel) {
	fm := &fakeModel{t: t, drafts: drafts}
	srv := httptest.NewServer(fm)
	t.Cleanup(srv.Close)
	e := newEnv(t, "ask")
	e.writeConfig(fmt.Sprintf("[connectors.files]\nroots = [%q]\n\n[llm]\nendpoint = %q\nmodel = \"test-model\"\napi_key_env = \"KEEP_TEST_LLM_KEY\"\n",
		e.root, srv.URL+"/v1"))
	e.file(e.root, "inbox/a.txt", "alpha")
	return e, fm
}

func TestNewDraftsUntilItWorks(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "sk-test-123")
	e, fm := llmEnv(t, draftBroken, draftFixed(`p.data.name + "\n"`))
	out := filepath.Join(e.dir, "notes-log.js")
	r := e.ok("new", "log every note in inbox to log.txt", "-o", out, "--with-reads")
	got, err := os.ReadFile(out)
	if err != nil || string(got) != draftFixed(`p.data.name + "\n"`) {
		t.Fatalf("the draft written is %q (%v)", got, err)
	}
	for _, want := range []string{"wrote " + out, "draft 2 of at most 3", "inputs (1)", "files.append", "grants it needs", "files.append (now: ask)",
		"reads (1):", `files.list {"dir":"inbox"`, "(performed)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("keep new lacks %q:\n%s", want, r.stdout)
		}
	}
	if e.read("log.txt") != "" {
		t.Error("keep new's dry run appended to log.txt")
	}
	reqs := fm.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to the model, want 2", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if first.auth != "Bearer sk-test-123" || first.Model != "test-model" {
		t.Errorf("request auth %q, model %q", first.auth, first.Model)
	}
	if len(first.Msgs) != 2 || first.Msgs[0].Role != "system" || first.Msgs[1].Role != "user" ||
		!strings.Contains(first.Msgs[0].Content, "ctx.files.append(") || !strings.Contains(first.Msgs[0].Content, "# Writing keep workflows") ||
		!strings.Contains(first.Msgs[1].Content, "log every note in inbox") {
		t.Errorf("the first request's messages lack the reference, the guide or the description: %+v", roles(first))
	}
	if len(second.Msgs) != 4 || second.Msgs[2].Role != "assistant" || second.Msgs[3].Role != "user" ||
		!strings.Contains(second.Msgs[3].Content, `<untrusted-data name=\"problems\">`) && !strings.Contains(second.Msgs[3].Content, `<untrusted-data name="problems">`) ||
		!strings.Contains(second.Msgs[3].Content, `\"note.seen\", which is not declared`) {
		t.Errorf("the second request does not hand back the error: %+v", roles(second))
	}
	if wfs := jsonOf[[]api.WorkflowView](e, "workflows"); len(wfs) != 0 {
		t.Errorf("keep new deployed something: %+v", wfs)
	}

	// keep edit on the file: a diff, the file rewritten
	fm.answer(draftFixed(`"note: " + p.data.name + "\n"`))
	r = e.ok("edit", out, "prefix each line with note:")
	if !strings.Contains(r.stdout, "--- "+out) || !strings.Contains(r.stdout, `+      async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: "note: "`) {
		t.Errorf("keep edit shows no unified diff:\n%s", r.stdout)
	}
	if got, _ := os.ReadFile(out); !strings.Contains(string(got), `"note: "`) {
		t.Errorf("keep edit did not write the new draft: %s", got)
	}
	reqs = fm.requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Msgs[1].Content, `content: p.data.name + "\n"`) || !strings.Contains(last.Msgs[1].Content, "prefix each line") {
		t.Errorf("keep edit's request lacks the current script or the change: %s", last.Msgs[1].Content)
	}

	// keep edit on a deployed workflow: its script from the engine, and a
	// dry run from its state (a.txt is seen already: nothing new to log)
	e.ok("deploy", out)
	e.ok("grant", "notes-log", "files.append", "--mode", "allow")
	e.ok("drain")
	fm.answer(draftFixed(`"deployed: " + p.data.name + "\n"`))
	r = e.ok("edit", "notes-log", "say deployed", "-o", filepath.Join(e.dir, "edited.js"), "--with-reads")
	if !strings.Contains(r.stdout, `-      async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: "note: "`) {
		t.Errorf("keep edit of a deployed workflow diffs against something else:\n%s", r.stdout)
	}
	for _, want := range []string{"started from a copy of the database", "inputs (0)", "mutations it would make (0)", "files.append (now: allow)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("keep edit's dry run does not start from the deployed workflow (%q):\n%s", want, r.stdout)
		}
	}

	// a draft that renames the workflow never works; --propose puts one in Attention
	fm.answer(strings.Replace(draftFixed(`"x" + p.data.name + "\n"`), `name: "notes-log"`, `name: "renamed"`, 1))
	if r = e.expect(1, "edit", "notes-log", "rename it", "-o", filepath.Join(e.dir, "renamed.js")); !strings.Contains(r.stderr, "rename") {
		t.Errorf("a renaming draft: %s", r)
	}
	fm.answer(draftFixed(`"proposed: " + p.data.name + "\n"`))
	r = e.ok("edit", "notes-log", "say proposed", "--propose")
	if !strings.Contains(r.stdout, "proposed p") || !strings.Contains(r.stdout, `+      async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: "proposed: "`) {
		t.Errorf("keep edit --propose:\n%s", r.stdout)
	}
	if r = e.ok("attention"); !strings.Contains(r.stdout, "proposal") || !strings.Contains(r.stdout, "keep edit: say proposed") {
		t.Errorf("the proposal is not in keep attention:\n%s", r.stdout)
	}
}

func roles(r chatRequest) []string {
	var out []string
	for _, m := range r.Msgs {
		out = append(out, m.Role)
	}
	return out
}

func TestNewGivesUpAfterThreeRounds(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "k")
	e, fm := llmEnv(t, draftBroken)
	out := filepath.Join(e.dir, "x.js")
	r := e.expect(1, "new", "anything", "-o", out)
	if reqs := fm.requests(); len(reqs) != 3 || !strings.Contains(r.stderr, "no working draft after 3 rounds") ||
		!strings.Contains(r.stderr, "wrote the last draft to "+out+", marked as not working yet") {
		t.Errorf("%d requests; %s", len(reqs), r)
	}
	got, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(got), "// keep: THIS DRAFT DOES NOT WORK YET") ||
		!strings.Contains(string(got), `"note.seen"`) || !strings.HasSuffix(string(got), draftBroken) {
		t.Errorf("the last draft was not written, marked invalid: %q (%v)", got, err)
	}
	// its problems name the file it was written to, not the name it was
	// checked under
	if strings.Contains(r.stderr+string(got), "draft.js:") || !strings.Contains(r.stderr, out+":") {
		t.Errorf("the messages do not name %s:\n%s\n%s", out, r.stderr, got)
	}
}

// TestLLMWithoutAKeySaysSo: an [llm] without a key says it sends none.
func TestLLMWithoutAKeySaysSo(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "")
	e, _ := llmEnv(t, draftBroken)
	r := e.expect(1, "new", "anything", "-o", filepath.Join(e.dir, "y.js"))
	if !strings.Contains(r.stderr, "$KEEP_TEST_LLM_KEY is empty, so keep sends no key to") {
		t.Errorf("no note of the missing key: %s", r)
	}
}

// TestNewCapturesReads: without --with-reads, keep new's dry run reads
// nothing outside keep: each read is listed, with every host it names.
func TestNewCapturesReads(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "k")
	e, _ := llmEnv(t, strings.Replace(draftFixed(`p.data.name + "\n"`), `for (const f of await`,
		`await ctx.http.get({ url: "http://127.0.0.1:9/feed" }); for (const f of await`, 1))
	r := e.ok("new", "log notes", "-o", filepath.Join(e.dir, "n.js"))
	for _, want := range []string{"inputs (0)", `files.list {"dir":"inbox"`, `http.get {"url":"http://127.0.0.1:9/feed"}`,
		"captured: not performed", "hosts: 127.0.0.1:9"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("keep new lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "(performed)") {
		t.Errorf("a read was performed without --with-reads:\n%s", r.stdout)
	}
}

func TestNewAndEditWithoutLLMSayWhatToAdd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	for _, args := range [][]string{{"new", "anything"}, {"edit", "somewf", "anything"}} {
		r := e.expect(1, args...)
		for _, want := range []string{"[llm]", `endpoint = "`, `model = "`, `api_key_env = "KEEP_LLM_API_KEY"`, e.config} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("keep %s without [llm] lacks %q: %s", args[0], want, r)
			}
		}
	}
}
