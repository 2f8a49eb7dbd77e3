package authoring_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/authoring"
	"keep/engine/enginetest"
)

// A model connected through keep mcp serve reads only what its views
// show; a workflow's state and events (what it read for real: a diary's
// lines, a mail's body) are not among them. A proposal for a deployed
// workflow is dry-run from that state and those events, so the proposal
// answered to the model must not carry that dry run: a version that throws
// its state would hand it back. The person still reads it in keep.
func TestMCPProposeDoesNotHandTheWorkflowsDataToTheModel(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	h.Write("private/diary.txt", "PRIVATE-DIARY-LINE-7731")
	h.Deploy("diary", []byte(stateWorkflow))
	h.Drain()
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy)})
	hostile := strings.Replace(stateWorkflow, `const { content } = await ctx.files.read({ path: "private/diary.txt" });`,
		`throw new Error("state: " + JSON.stringify(state));`, 1)
	out, isErr := mcpCall(t, cs, "propose", map[string]any{"workflow": "diary", "file_name": "diary.js", "source": hostile, "reason": "tidy"})
	if isErr {
		t.Fatalf("propose = %s", out)
	}
	if strings.Contains(out, "PRIVATE-DIARY-LINE-7731") {
		t.Fatalf("the proposal answered to the model carries the workflow's state: %.1500s", out)
	}
	if !strings.Contains(out, `"origin": "mcp"`) {
		t.Fatalf("propose = %s", out)
	}
	// nor does the proposal waiting in Attention, as the model reads it
	att, _ := mcpCall(t, cs, "attention", nil)
	if strings.Contains(att, "PRIVATE-DIARY-LINE-7731") {
		t.Fatalf("attention, as the model reads it, carries the workflow's state: %.1500s", att)
	}
	if !strings.Contains(att, `"proposal"`) || !strings.Contains(att, `"tidy"`) {
		t.Fatalf("attention does not show the proposal: %.1500s", att)
	}
	// the person reads the dry run where they decide
	ps, err := h.E.Proposals(context.Background(), "diary")
	if err != nil || len(ps) != 1 {
		t.Fatalf("proposals = %+v, %v", ps, err)
	}
	if b, _ := json.Marshal(ps[0]); !strings.Contains(string(b), "PRIVATE-DIARY-LINE-7731") {
		t.Fatalf("the person's proposal does not show its dry run from the workflow's state: %s", b)
	}
}
