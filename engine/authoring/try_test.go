package authoring_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// trySink is a real HTTP server: GET /items lists two items, and any other
// method fails the test — a dry run must never reach a mutation endpoint.
func trySink(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("a dry run sent %s %s to the service", r.Method, r.URL)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		gets.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":"a1","title":"Alpha"},{"id":"b2","title":"Beta"}]`))
	}))
	t.Cleanup(srv.Close)
	return srv, &gets
}

func tryWorkflow(base string) string {
	return `export default Keep.workflow({
  name: "tryme",
  topics: { "item.found": {}, "item.posted": {}, "tick": {} },
  producers: {
    poll: { publishes: ["item.found"], schedule: { interval: "1h" }, handler: async (ctx) => {
      const { json } = await ctx.http.get({ url: "` + base + `/items" });
      for (const it of json) {
        const inputId = ctx.registerInput({ source: "http", type: "resource", id: it.id, title: "Item " + it.title });
        await ctx.publish("item.found", { messageId: it.id, inputId, payload: it });
      }
    } },
    idle: { publishes: ["tick"], schedule: { interval: "1h" }, handler: async (ctx) => {
      console.log("idle producer ran");
    } },
  },
  consumers: {
    post: Keep.consumer({
      subscribe: ["item.found"],
      publishes: ["item.posted"],
      async prepare(ctx) {
        const [e] = await ctx.peek("item.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "item.found", ids: [e.messageId] }], data: e.payload,
                 ui: { title: "Post " + e.payload.title } };
      },
      async mutate(ctx, p) {
        await ctx.http.request({ method: "POST", url: "` + base + `/hook", json: p.data });
      },
      async next(ctx, p, r) {
        if (r.status === "applied") await ctx.publish("item.posted", { messageId: p.data.id, payload: p.data });
      },
    }),
    log: Keep.consumer({
      subscribe: ["item.posted"],
      async prepare(ctx) {
        const [e] = await ctx.peek("item.posted", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "item.posted", ids: [e.messageId] }], data: e.payload };
      },
      async mutate(ctx, p) { await ctx.files.append({ path: "posted.log", content: p.data.id + "\n" }); },
      async next() {},
    }),
  },
});
`
}

func snapshot(t *testing.T, paths ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

func TestDryRunCapturesMutationsAndTouchesNothingReal(t *testing.T) {
	srv, gets := trySink(t)
	b := enginetest.New(t, enginetest.Opts{})
	ctx := context.Background()
	src := tryWorkflow(srv.URL)
	b.Deploy("tryme", []byte(src))
	if err := b.E.Grant(ctx, "tryme", api.GrantView{Capability: "http.request", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	files := []string{b.DBPath, b.DBPath + "-wal", filepath.Join(b.Root, "posted.log")}
	before := snapshot(t, files...)

	rep, err := b.API.DryRun(ctx, "tryme", api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if gets.Load() == 0 {
		t.Fatal("the producer's read did not reach the real service")
	}
	for p, was := range snapshot(t, files...) {
		if !bytes.Equal(was, before[p]) {
			t.Errorf("%s changed during a dry run", p)
		}
	}
	if muts, _ := b.E.Mutations(ctx, "tryme", ""); len(muts) != 0 {
		t.Errorf("the real ledger has %d rows after a dry run", len(muts))
	}
	if runs, _ := b.E.Runs(ctx, "tryme", api.Page{}); len(runs) != 0 {
		t.Errorf("the real database has %d runs after a dry run", len(runs))
	}

	if rep.StartedFrom != "from a copy of the database" || len(rep.Inputs) != 2 {
		t.Fatalf("report inputs = %+v (from %q)", rep.Inputs, rep.StartedFrom)
	}
	var posts, appends []api.TryMutation
	for _, m := range rep.Mutations {
		switch m.Connector + "." + m.Method {
		case "http.request":
			posts = append(posts, m)
		case "files.append":
			appends = append(appends, m)
		}
	}
	if len(posts) != 2 || len(appends) != 2 {
		t.Fatalf("captured %d posts and %d appends, want 2 of each: %+v", len(posts), len(appends), rep.Mutations)
	}
	p := posts[0]
	if !strings.Contains(string(p.Params), srv.URL+"/hook") || !strings.Contains(p.Preview, "POST") ||
		p.Title != "Post Alpha" || len(p.CausedBy) != 1 || p.CausedBy[0] != "Item Alpha" || p.NeedsApproval {
		t.Errorf("captured post = %+v", p)
	}
	a := appends[0]
	if !a.NeedsApproval || !strings.Contains(a.Approval, "files.append") || len(a.CausedBy) != 1 {
		t.Errorf("the files.append without a grant is not shown waiting for approval: %+v", a)
	}
	var sawGet, sawIdle bool
	for _, r := range rep.Runs {
		for _, l := range r.Trace {
			if l.Kind == "call" && l.Connector == "http" && l.Method == "get" {
				sawGet = true
			}
			if l.Kind == "log" && strings.Contains(l.Result, "idle producer ran") {
				sawIdle = true
			}
		}
	}
	if !sawGet || !sawIdle {
		t.Errorf("the runs' traces lack the read (%v) or the idle producer's line (%v): %+v", sawGet, sawIdle, rep.Runs)
	}
}

func TestTryOneProducerWithALimit(t *testing.T) {
	srv, _ := trySink(t)
	b := enginetest.New(t, enginetest.Opts{})
	ctx := context.Background()
	src := []byte(tryWorkflow(srv.URL))
	rep, err := authoring.Try(ctx, b.E.Registry(), b.E.Policy(), "tryme.js", src, api.TryOptions{Producer: "poll", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.LimitReached || len(rep.Mutations) != 1 || rep.PendingEvents == 0 {
		t.Fatalf("limit 1: reached=%v mutations=%d pending=%d", rep.LimitReached, len(rep.Mutations), rep.PendingEvents)
	}
	if !rep.Mutations[0].NeedsApproval {
		t.Errorf("a never-deployed workflow's mutation under the default mode (ask) is shown as allowed: %+v", rep.Mutations[0])
	}
	for _, r := range rep.Runs {
		if r.Handler == "idle" {
			t.Errorf("--producer poll ran producer idle")
		}
	}
	if _, err := authoring.Try(ctx, b.E.Registry(), b.E.Policy(), "tryme.js", src, api.TryOptions{Producer: "nosuch"}); err == nil ||
		!strings.Contains(err.Error(), "poll, idle") {
		t.Errorf("an unknown producer: %v, want an error naming poll and idle", err)
	}
	if _, err := authoring.Try(ctx, b.E.Registry(), b.E.Policy(), "bad.js", []byte("export default Keep.workflow({})"), api.TryOptions{}); err == nil {
		t.Error("an invalid file was tried")
	}
}

// noteLogWorkflow appends one line per note in inbox/ to log.txt (the
// authoring tests of engine/clitest draft the same file).
func noteLogWorkflow(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../testdata/notes.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// TestDryRunStartsFromTheDeployedState: a note the workflow has already
// logged is not shown again; only the new one is, and log.txt stays as the
// real run left it.
func TestDryRunStartsFromTheDeployedState(t *testing.T) {
	b := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){enginetest.AllowMutations}})
	ctx := context.Background()
	write := func(rel, s string) {
		p := filepath.Join(b.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("inbox/a.txt", "a")
	b.Deploy("notes", []byte(noteLogWorkflow(t)))
	if err := b.E.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(b.Root, "log.txt")
	if got, _ := os.ReadFile(logPath); string(got) != "a.txt\n" {
		t.Fatalf("the real run logged %q", got)
	}
	write("inbox/b.txt", "b")

	rep, err := b.API.DryRun(ctx, "notes", api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mutations) != 1 || !strings.Contains(string(rep.Mutations[0].Params), "b.txt") || rep.Mutations[0].NeedsApproval {
		t.Fatalf("dry run mutations = %+v, want only b.txt's append, allowed", rep.Mutations)
	}
	if len(rep.Inputs) != 1 || rep.Inputs[0].ExternalID != "inbox/b.txt" {
		t.Errorf("dry run inputs = %+v, want only the new note", rep.Inputs)
	}
	if got, _ := os.ReadFile(logPath); string(got) != "a.txt\n" {
		t.Errorf("log.txt after the dry run = %q", got)
	}

	if err := b.E.Pause(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	rep, err = b.API.DryRun(ctx, "notes", api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mutations) != 0 || !strings.Contains(rep.Note, "paused") {
		t.Errorf("a paused workflow's dry run: %d mutations, note %q", len(rep.Mutations), rep.Note)
	}
}

// TestDryRunCountsTheDailyLimit: a dry run shows the calls a daily limit
// would hold for approval, counting the calls the workflow made for real
// today: with a limit of 2 and one note logged, of two new notes the first
// is allowed and the second waits.
func TestDryRunCountsTheDailyLimit(t *testing.T) {
	b := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){enginetest.AllowMutations}})
	ctx := context.Background()
	b.Write("inbox/a.txt", "a")
	b.Deploy("notes", []byte(noteLogWorkflow(t)))
	if err := b.E.Grant(ctx, "notes", api.GrantView{Capability: "files.append", Mode: "allow", DailyLimit: 2}); err != nil {
		t.Fatal(err)
	}
	b.Drain()
	b.Write("inbox/b.txt", "b")
	b.Write("inbox/c.txt", "c")
	rep, err := b.API.DryRun(ctx, "notes", api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mutations) != 2 {
		t.Fatalf("dry run mutations = %+v, want b's and c's", rep.Mutations)
	}
	if first := rep.Mutations[0]; first.NeedsApproval {
		t.Errorf("the second call today waits: %+v", first)
	}
	if second := rep.Mutations[1]; !second.NeedsApproval || !strings.Contains(second.Approval, "past its limit of 2 a day") {
		t.Errorf("the third call today = %+v, want it waiting past the limit", second)
	}
}
