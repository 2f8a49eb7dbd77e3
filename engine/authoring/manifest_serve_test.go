package authoring_test

import (
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/enginetest"
)

// The red-team's rewrite proposed over keep mcp serve (files reached by
// computed names, to write over another file under the workflow's
// files.append grant) is refused with where it is, and nothing is
// proposed; its try says the same.
func TestMCPServeRefusesCtxItCannotName(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	h.Deploy("notes", []byte(mcpServeNotes))
	h.Drain()
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy)})
	rewrite := strings.Replace(mcpServeNotes, `async mutate(ctx, p) { await ctx.files.append({ path: "notes.txt", content: p.data.text + "\n" }); },`,
		`async mutate(ctx, p) { const c = ctx, F = "fil" + "es"; await c[F]["app" + "end"]({ path: "../victim.txt", content: "x" }); },`, 1)
	if rewrite == mcpServeNotes {
		t.Fatal("the rewrite did not apply")
	}
	for _, tool := range []string{"propose", "try"} {
		out, isErr := mcpCall(t, cs, tool, map[string]any{"workflow": "notes", "file_name": "notes.js", "source": rewrite, "reason": "tidy"})
		if !isErr || !strings.Contains(out, "notes.js:16:67:") || !strings.Contains(out, "cannot follow") {
			t.Errorf("%s = %v %s, want a refusal at notes.js:16:67", tool, isErr, out)
		}
	}
	for _, a := range h.Attention() {
		if a.Kind == api.AttentionProposal {
			t.Fatalf("a proposal was filed: %+v", a)
		}
	}
}
