package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors/accounts"
	"keep/connectors/accounts/oauthtest"
	"keep/engine/api"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpNotesWorkflow posts a new note through the MCP server svc each time
// its producer runs.
const mcpNotesWorkflow = `
export default Keep.workflow({ name: "notes", topics: { note: {} },
  producers: { once: { publishes: ["note"], schedule: { interval: "5m" }, handler: async (ctx, state) => {
    const n = "n" + ((state?.n ?? 0) + 1);
    const id = ctx.registerInput({ source: "mcp", type: "item", id: n, title: "Note " + n });
    await ctx.publish("note", { messageId: n, inputId: id, payload: { text: n } });
    return { n: (state?.n ?? 0) + 1 };
  } } },
  consumers: { post: Keep.consumer({ subscribe: ["note"],
    async prepare(ctx) { const [e] = await ctx.peek("note"); return e ? { reservations: [{ topic: "note", ids: [e.messageId] }], data: e.payload } : { reservations: [], data: {} }; },
    async mutate(ctx, p) { await ctx.mcp.svc.post({ text: p.data.text }); },
    async next() {} }) } });
`

// guardedMCP is an MCP server over streamable HTTP taking only the tokens
// srv gave and has not expired; posts counts the calls of its tool post.
func guardedMCP(t *testing.T, srv *oauthtest.Server) (url string, posts *atomic.Int32) {
	posts = new(atomic.Int32)
	server := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "post", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			posts.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"id":"p1"}`}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !srv.Active(oauthtest.Bearer(r)) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", posts
}

// mcpAuthEnv is an env whose MCP server svc is reached with the account
// api, signed in to, and whose tool list is known.
func mcpAuthEnv(t *testing.T, srv *oauthtest.Server, url string) *env {
	e := newEnv(t, "allow")
	cfg, _ := os.ReadFile(e.config)
	e.writeConfig(string(cfg) + fmt.Sprintf(`
[accounts.api]
kind = "oauth2"
client_id = %q
auth_url = %q
token_url = %q
scopes = ["read"]

[mcp.svc]
url = %q
account = "api"
`, srv.ClientID, srv.AuthURL(), srv.TokenURL(), url))
	loginThroughBrowser(t, e, srv, srv.ClientSecret+"\n", "api")
	if r := e.ok("mcp", "tools", "svc"); !strings.Contains(r.stdout, "post") {
		t.Fatalf("keep mcp tools svc: %s", r)
	}
	return e
}

// refusedAsAuth checks what a person sees of the refused token: notes
// blocked as auth, the auth item, the account needing sign-in.
func refusedAsAuth(t *testing.T, e *env) {
	t.Helper()
	att := jsonOf[[]api.AttentionItem](e, "attention")
	if len(att) != 1 || att[0].Kind != "auth" || att[0].Command != "keep auth login api" {
		t.Fatalf("attention = %+v, want the auth item", att)
	}
	var api *accounts.Status
	for _, s := range jsonOf[[]accounts.Status](e, "auth", "list") {
		if s.Name == "api" {
			api = &s
		}
	}
	if api == nil || api.State != accounts.StateNeedsSignIn {
		t.Fatalf("keep auth list: api is %+v, want it needing sign-in", api)
	}
}

func blockedAsAuth(wfs []api.WorkflowView) bool {
	return len(wfs) == 1 && wfs[0].Block != nil && wfs[0].Block.Kind == "auth" && strings.Contains(wfs[0].Block.Reason, "keep auth login api")
}

// TestMCPRefusedTokenBlocksUntilSignIn (issue 42): an MCP server over
// streamable HTTP that answers 401 to the token keep sent blocks the
// workflow with the auth item naming `keep auth login api`, `keep auth
// list` shows the account as needing sign-in, and signing in again
// resumes the workflow, whose call is then made once.
func TestMCPRefusedTokenBlocksUntilSignIn(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	srv.NoRefresh = true // nothing but a sign-in gets a new token
	url, posts := guardedMCP(t, srv)
	e := mcpAuthEnv(t, srv, url)

	srv.ExpireAccess() // the server stops taking the token
	e.ok("deploy", e.file(e.dir, "notes.js", mcpNotesWorkflow))
	e.ok("drain", "--timeout", "1m")
	if wfs := jsonOf[[]api.WorkflowView](e, "workflows"); !blockedAsAuth(wfs) {
		t.Fatalf("workflows = %+v, want notes blocked as auth naming keep auth login api", wfs)
	}
	refusedAsAuth(t, e)
	if posts.Load() != 0 {
		t.Fatalf("%d posts with a refused token", posts.Load())
	}

	if r := loginThroughBrowser(t, e, srv, "", "api"); !strings.Contains(r.stdout, "resumed notes") {
		t.Errorf("keep auth login says:\n%s", r)
	}
	e.ok("drain", "--timeout", "1m")
	wfs := jsonOf[[]api.WorkflowView](e, "workflows")
	if len(wfs) != 1 || wfs[0].Block != nil || posts.Load() != 1 {
		t.Fatalf("after the sign-in: workflows %+v, %d posts, want notes unblocked and one post", wfs, posts.Load())
	}
}

// TestMCPRefusedTokenBlocksTheDaemonUntilSignIn: the same through a
// daemon whose session with the server is open: the token refused on a
// call of that session blocks notes as auth (not an uncertain call), and
// keep auth login from the command line resumes it at once.
func TestMCPRefusedTokenBlocksTheDaemonUntilSignIn(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	srv.NoRefresh = true
	url, posts := guardedMCP(t, srv)
	e := mcpAuthEnv(t, srv, url)
	e.ok("deploy", e.file(e.dir, "notes.js", mcpNotesWorkflow))

	d := startDaemon(t, e)
	defer d.kill(t)
	awaitSocket(t, e, d, 30*time.Second)
	await := func(what string, done func(wfs []api.WorkflowView) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			wfs := jsonOf[[]api.WorkflowView](e, "workflows")
			if done(wfs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: workflows %+v, %d posts\n%s", what, wfs, posts.Load(), d.errb.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	await("the daemon did not post the first note", func([]api.WorkflowView) bool { return posts.Load() == 1 })

	srv.ExpireAccess()
	e.ok("run-now", "notes")
	await("the daemon did not block notes as auth", blockedAsAuth)
	refusedAsAuth(t, e)

	if r := loginThroughBrowser(t, e, srv, "", "api"); !strings.Contains(r.stdout, "resumed notes") {
		t.Errorf("keep auth login says:\n%s", r)
	}
	await("the daemon did not go on with the new token", func(wfs []api.WorkflowView) bool {
		return len(wfs) == 1 && wfs[0].Block == nil && posts.Load() >= 2
	})
	// the refused attempt is a failed row saying why (nothing was done);
	// each note is posted once
	applied := map[string]int{}
	for _, m := range jsonOf[[]api.MutationView](e, "mutations", "notes") {
		switch {
		case m.Status == "applied":
			var p struct{ Text string }
			json.Unmarshal(m.Params, &p)
			applied[p.Text]++
		case m.Status != "failed" || !strings.Contains(m.Error, "auth: sign in to api again (keep auth login api)"):
			t.Errorf("mutation %+v", m)
		}
	}
	if len(applied) != 2 || applied["n1"] != 1 || applied["n2"] != 1 || posts.Load() != 2 {
		t.Fatalf("applied %v, %d posts: want n1 and n2 posted, once each", applied, posts.Load())
	}
}
