package authoring_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/authoring/model"
	"keep/engine/config"
	"keep/engine/enginetest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// endlessWorkflow's consumers publish to each other without end: nothing
// it does is a mutation, so no limit of captured mutations stops it.
const endlessWorkflow = `export default Keep.workflow({
  name: "endless",
  topics: { s: {}, a: {}, b: {} },
  producers: { p: { publishes: ["s"], schedule: { interval: "1h" }, handler: async (ctx) => {
    await ctx.publish("s", { messageId: "0", payload: { n: 0 } });
  } } },
  consumers: {
    ping: Keep.consumer({
      subscribe: ["s", "a"], publishes: ["b"],
      async prepare(ctx) {
        for (const t of ["s", "a"]) {
          const [e] = await ctx.peek(t, { limit: 1 });
          if (e) return { reservations: [{ topic: t, ids: [e.messageId] }], data: e.payload };
        }
        return { reservations: [], data: {} };
      },
      async mutate(ctx, p) {},
      async next(ctx, p) { await ctx.publish("b", { messageId: String(p.data.n + 1), payload: { n: p.data.n + 1 } }); },
    }),
    pong: Keep.consumer({
      subscribe: ["b"], publishes: ["a"],
      async prepare(ctx) {
        const [e] = await ctx.peek("b", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "b", ids: [e.messageId] }], data: e.payload };
      },
      async mutate(ctx, p) {},
      async next(ctx, p) { await ctx.publish("a", { messageId: String(p.data.n + 1), payload: { n: p.data.n + 1 } }); },
    }),
  },
});
`

func shortRuns(c *config.Config) {
	c.Policy.HandlerTimeout = config.Duration{Duration: 500 * time.Millisecond}
}

// A dry run ends by itself, whatever the script: one whose consumers feed
// each other without end is stopped at DryRunTime and said to be, where
// it used to run until its caller gave up — keep mcp serve's try and
// propose spun (and grew a temporary database) for as long as the client
// waited.
func TestADryRunThatNeverEndsIsStopped(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){shortRuns}})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.PolicyFrom(h.Cfg.Policy)
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: pol})
	// the caller's own patience is far longer than the bound
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Now()
	_, err = authoring.Try(ctx, reg, pol, "endless.js", []byte(endlessWorkflow), api.TryOptions{CaptureReads: true})
	if err == nil || !strings.Contains(err.Error(), "did not end within") || time.Since(start) > 20*authoring.DryRunTime(pol) {
		t.Fatalf("Try = %v after %s, want it stopped at %s", err, time.Since(start), authoring.DryRunTime(pol))
	}
	for _, tool := range []string{"try", "propose"} {
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"file_name": "endless.js", "source": endlessWorkflow, "reason": "r"}})
		if err != nil {
			t.Fatalf("%s: %v after %s", tool, err, time.Since(start))
		}
		if out := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(out, "did not end within") || time.Since(start) > 20*authoring.DryRunTime(pol) {
			t.Errorf("%s = %.300s after %s", tool, out, time.Since(start))
		}
	}
}

// chatServer is a local OpenAI-compatible chat-completions server: it
// answers with answers in turn (the last one again after) and keeps every
// request body as it arrived.
type chatServer struct {
	mu      sync.Mutex
	answers []string
	bodies  []string
	auth    []string
}

func newChatServer(t *testing.T, answers ...string) (*chatServer, *model.Chat) {
	cs := &chatServer{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		cs.mu.Lock()
		n := len(cs.bodies)
		cs.bodies = append(cs.bodies, string(raw))
		cs.auth = append(cs.auth, r.Header.Get("Authorization"))
		answer := cs.answers[min(n, len(cs.answers)-1)]
		cs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "```javascript\n" + answer + "\n```\n"}}}})
	}))
	t.Cleanup(srv.Close)
	return cs, &model.Chat{URL: srv.URL + "/v1/chat/completions", Model: "m", APIKey: "sk-llm-test-key"}
}

func (cs *chatServer) requests() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.bodies)
}

// stateWorkflow keeps what its producer read in its state, as a workflow
// that remembers what it has seen does.
const stateWorkflow = `export default Keep.workflow({
  name: "diary",
  topics: { "entry": {} },
  producers: { scan: { publishes: ["entry"], schedule: { interval: "1h" }, handler: async (ctx, state) => {
    const { content } = await ctx.files.read({ path: "private/diary.txt" });
    return { last: content };
  } } },
  consumers: {},
});
`

// keep edit (without --with-reads) asks a model to change a deployed
// workflow, and its draft is dry-run from a copy of the workflow's
// database. What the workflow read for real before (its state, its
// events) is the person's data: a draft that throws it must not carry it
// to the model in the problems handed back.
func TestAnEditDraftCannotReadTheWorkflowsDataBackToTheModel(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	h.Write("private/diary.txt", "PRIVATE-DIARY-LINE-7731")
	h.Deploy("diary", []byte(stateWorkflow))
	h.Drain()
	hostile := strings.Replace(stateWorkflow, `const { content } = await ctx.files.read({ path: "private/diary.txt" });`,
		`throw new Error("state: " + JSON.stringify(state));`, 1)
	srv, chat := newChatServer(t, hostile, stateWorkflow)
	ctx := context.Background()
	a := authoring.Author{E: h.E}
	sv, err := h.E.Script(ctx, "diary")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = authoring.DraftWorkflow(ctx, chat, h.E.Registry(), h.E.Policy(), authoring.DraftRequest{Current: sv.Source, Change: "tidy it",
		FileName: sv.FileName, Name: "diary", Try: api.TryOptions{CaptureReads: true},
		TryFn: func(ctx context.Context, file string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
			return a.TryChange(ctx, "diary", file, src, opts)
		}})
	reqs := srv.requests()
	if len(reqs) < 2 {
		t.Fatalf("the model was asked %d times, want the hostile draft's problems handed back", len(reqs))
	}
	// the model still hears how its draft fails, as it fails on nothing
	if !strings.Contains(reqs[1], `state: undefined`) {
		t.Errorf("the second request does not tell the model how its draft failed: %.2000s", reqs[1])
	}
	for i, body := range reqs {
		for _, own := range []string{"sk-llm-test-key", h.DBPath, h.Root, h.Dir} {
			if strings.Contains(body, own) {
				t.Errorf("request %d to the model carries %q (a key, or where keep keeps its files or the person's)", i+1, own)
			}
		}
		if srv.auth[i] != "Bearer sk-llm-test-key" {
			t.Errorf("request %d went with Authorization %q", i+1, srv.auth[i])
		}
		if strings.Contains(body, "PRIVATE-DIARY-LINE-7731") {
			t.Errorf("request %d to the model carries the workflow's data: %.600s", i+1, body[strings.Index(body, "PRIVATE")-300:])
		}
	}
}

// A workflow deployed under another name than its file's (keep deploy
// --name) keeps its file's declared name in every version: its dry run, a
// change proposed for it and so a repair keep the file's name, and are not
// refused as renames of it. A script naming a third workflow still is.
func TestAWorkflowDeployedUnderAnotherNameCanBeTriedAndChanged(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	ctx := context.Background()
	if _, err := h.E.Deploy(ctx, "notes.js", []byte(mcpServeNotes), "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.API.DryRun(ctx, "other", api.TryOptions{}); err != nil {
		t.Errorf("the dry run of the deployed version: %v", err)
	}
	changed := strings.Replace(mcpServeNotes, `"notes.txt"`, `"notes-2.txt"`, 1)
	if _, err := (authoring.Author{E: h.E}).TryChange(ctx, "other", "notes.js", []byte(changed), api.TryOptions{CaptureReads: true}); err != nil {
		t.Errorf("a change's dry run: %v", err)
	}
	v, err := h.API.Propose(ctx, api.ProposalRequest{Workflow: "other", FileName: "notes.js", Source: []byte(changed), Origin: api.OriginMCP, Reason: "r"})
	if err != nil || v.Workflow != "other" || v.DryRunError != "" {
		t.Fatalf("a change proposed for it: %+v, %v", v, err)
	}
	third := strings.Replace(changed, `name: "notes"`, `name: "third"`, 1)
	if _, err := h.API.Propose(ctx, api.ProposalRequest{Workflow: "other", FileName: "notes.js", Source: []byte(third), Origin: api.OriginMCP, Reason: "r"}); err == nil ||
		!strings.Contains(err.Error(), "rename") {
		t.Errorf("a script naming a third workflow was proposed for it: %v", err)
	}
}

// keep mcp serve makes one dry run at a time: a client's calls arrive at
// once, and each try or propose of a file that runs until DryRunTime was
// its own engine on its own database, all spinning together (a proposal's
// in the daemon itself). Four calls of such a file take four times as long
// as one, not as long as one.
func TestMCPServeDryRunsOneAtATime(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){shortRuns}})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.PolicyFrom(h.Cfg.Policy)
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: pol})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const calls = 4
	start := time.Now()
	var wg sync.WaitGroup
	for i := range calls {
		tool := []string{"try", "propose"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"file_name": "endless.js", "source": endlessWorkflow, "reason": "r"}})
			if err != nil {
				t.Errorf("%s: %v", tool, err)
				return
			}
			if out := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(out, "did not end within") {
				t.Errorf("%s = %.300s", tool, out)
			}
		}()
	}
	wg.Wait()
	if took, least := time.Since(start), (calls-1)*authoring.DryRunTime(pol); took < least {
		t.Errorf("%d dry runs of %s each ended after %s: they ran side by side", calls, authoring.DryRunTime(pol), took)
	}
}

// repairable has a producer that fails until repaired.
const repairable = `export default Keep.workflow({
  name: "inboxer",
  topics: { note: {} },
  producers: { scan: { publishes: ["note"], schedule: { interval: "1h" }, handler: async (ctx) => {
    for (const f of await ctx.files.list({ dir: "inbox", glob: "*.txt" })) {
      const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name });
      await ctx.publish("note", { messageId: f.path, inputId, payload: { name: f.name } });
    }
    throw new Error("broken");
  } } },
  consumers: { log: Keep.consumer({
    subscribe: ["note"],
    async prepare(ctx) {
      const [e] = await ctx.peek("note", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "note", ids: [e.messageId] }], data: e.payload, ui: { title: "Log " + e.payload.name } };
    },
    async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: p.data.name + "\n" }); },
    async next() {},
  }) },
});
`

// A repair may not make the workflow run more than it did: a producer
// woken by every change of a folder (a watch, alone or beside its
// interval), or a consumer running more at once, is as much a widening as
// a faster interval, and such a repair is refused and only recorded. Each
// used to be proposed with nothing said of it.
func TestARepairMayNotMakeTheWorkflowRunMore(t *testing.T) {
	t.Parallel()
	fixed := strings.Replace(repairable, `throw new Error("broken");`, ``, 1)
	for name, c := range map[string]struct {
		answer, why string
	}{
		"a watch alone":           {strings.Replace(fixed, `schedule: { interval: "1h" }`, `schedule: { watch: "inbox" }`, 1), "scan"},
		"a watch beside the hour": {strings.Replace(fixed, `schedule: { interval: "1h" }`, `schedule: { watch: "inbox", interval: "1h" }`, 1), "scan"},
		"more runs at once":       {strings.Replace(fixed, `subscribe: ["note"],`, `subscribe: ["note"], concurrency: 8,`, 1), "log"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, chat := newChatServer(t, c.answer)
			h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){enginetest.AllowMutations},
				Repairer: authoring.RepairsFrom(model.EndpointRepairer{URL: chat.URL, Model: chat.Model})})
			h.Write("inbox/a.txt", "a")
			h.Deploy("inboxer", []byte(repairable))
			h.Drain()
			hist, err := h.E.Proposals(context.Background(), "inboxer")
			if err != nil || len(hist) != 1 {
				t.Fatalf("proposals = %+v, %v", hist, err)
			}
			if p := hist[0]; p.Status != api.ProposalRefused || !strings.Contains(p.Why, c.why) {
				t.Errorf("the repair is %s (%s), want it refused naming %s; summary adds %v", p.Status, p.Why, c.why, p.Summary.Adds)
			}
		})
	}
}
