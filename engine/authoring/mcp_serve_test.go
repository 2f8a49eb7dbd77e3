package authoring_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/enginetest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpServeNotes = `
export default Keep.workflow({
  name: "notes",
  topics: { note: {} },
  producers: { scan: { publishes: ["note"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "files", type: "file", id: "a", title: "Note a" });
    await ctx.publish("note", { messageId: "a", inputId, payload: { text: "hi" } });
  } } },
  consumers: { file: Keep.consumer({
    subscribe: ["note"],
    async prepare(ctx) {
      const [e] = await ctx.peek("note", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "note", ids: [e.messageId] }], data: { text: e.payload.text }, ui: { title: "File a note" } };
    },
    async mutate(ctx, p) { await ctx.files.append({ path: "notes.txt", content: p.data.text + "\n" }); },
    async next() {},
  }) },
});`

// session connects the SDK's own client to a server over an in-memory pipe.
func mcpSession(t *testing.T, o authoring.MCPServeOpts) *sdk.ClientSession {
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := authoring.NewMCPServer(o).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpCall(t *testing.T, cs *sdk.ClientSession, tool string, a map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

func TestMCPServe(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	h.Deploy("notes", []byte(mcpServeNotes))
	h.Drain()
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy)})

	t.Run("the tools are the reference, validate, try, propose and read-only views; none answers for the person", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			for _, bad := range []string{"approve", "reject", "resolve", "grant", "deploy", "skip", "pause", "resume", "retry", "run_now", "accept"} {
				if strings.Contains(tl.Name, bad) {
					t.Errorf("tool %q answers for the person", tl.Name)
				}
			}
			if tl.Name != "propose" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
				t.Errorf("tool %q is not marked read-only", tl.Name)
			}
		}
		slices.Sort(names)
		want := slices.Clone(authoring.MCPServeTools)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("tools = %v, want %v", names, want)
		}
	})

	t.Run("reference and validate", func(t *testing.T) {
		if ref, _ := mcpCall(t, cs, "reference", map[string]any{"connector": "files"}); !strings.Contains(ref, "ctx.files.append") {
			t.Fatalf("reference = %.300s", ref)
		}
		out, isErr := mcpCall(t, cs, "validate", map[string]any{"file_name": "n.js", "source": strings.Replace(mcpServeNotes, "files.append", "files.apend", 1)})
		if isErr || !strings.Contains(out, `"ok": false`) || !strings.Contains(out, `n.js:16:34:`) || !strings.Contains(out, `no method \"apend\"`) {
			t.Fatalf("validate = %s", out)
		}
		out, _ = mcpCall(t, cs, "validate", map[string]any{"file_name": "n.js", "source": mcpServeNotes})
		if !strings.Contains(out, `"ok": true`) || !strings.Contains(out, "files.append") {
			t.Fatalf("validate = %s", out)
		}
		if _, isErr := mcpCall(t, cs, "validate", map[string]any{"file_name": "n.txt", "source": mcpServeNotes}); !isErr {
			t.Fatal("a file name without .js or .ts is refused")
		}
	})

	t.Run("try captures the mutation and makes none", func(t *testing.T) {
		out, isErr := mcpCall(t, cs, "try", map[string]any{"file_name": "other.js", "source": strings.Replace(mcpServeNotes, `name: "notes"`, `name: "other"`, 1)})
		if isErr || !strings.Contains(out, `"append"`) {
			t.Fatalf("try = %s", out)
		}
		if got := h.Read("notes.txt"); got != "" {
			t.Fatalf("try wrote %q", got)
		}
	})

	t.Run("read-only views see what the engine did", func(t *testing.T) {
		for tool, want := range map[string]string{"workflows": `"notes"`, "attention": `"approval"`} {
			if out, _ := mcpCall(t, cs, tool, nil); !strings.Contains(out, want) {
				t.Errorf("%s = %.400s", tool, out)
			}
		}
		for tool, want := range map[string]string{"status": `"notes"`, "inputs": `"Note a"`, "runs": `"scan"`} {
			if out, _ := mcpCall(t, cs, tool, map[string]any{"workflow": "notes"}); !strings.Contains(out, want) {
				t.Errorf("%s = %.400s", tool, out)
			}
		}
		if _, isErr := mcpCall(t, cs, "runs", nil); !isErr {
			t.Error("runs without a workflow is refused")
		}
		// nothing the assistant did answered the approval
		if att := h.Attention(); len(att) != 1 || att[0].Kind != "approval" {
			t.Fatalf("attention = %+v", att)
		}
	})

	t.Run("propose puts the file in Attention; nothing is deployed before the person accepts", func(t *testing.T) {
		changed := strings.Replace(mcpServeNotes, `"notes.txt"`, `"notes-2.txt"`, 1)
		before, err := h.E.Workflow(context.Background(), "notes")
		if err != nil {
			t.Fatal(err)
		}
		out, isErr := mcpCall(t, cs, "propose", map[string]any{"workflow": "notes", "file_name": "notes.js", "source": changed, "reason": "file notes elsewhere"})
		if isErr || !strings.Contains(out, `"origin": "mcp"`) || !strings.Contains(out, "notes-2.txt") {
			t.Fatalf("propose = %s", out)
		}
		var found bool
		for _, a := range h.Attention() {
			found = found || a.Kind == api.AttentionProposal && a.Workflow == "notes" && strings.Contains(a.Title, "MCP")
		}
		if !found {
			t.Fatalf("attention = %+v, want the proposal from MCP", h.Attention())
		}
		after, err := h.E.Workflow(context.Background(), "notes")
		if err != nil {
			t.Fatal(err)
		}
		if after.Version != before.Version {
			t.Fatalf("the workflow went from version %v to %v before anyone accepted", before.Version, after.Version)
		}
	})
}
