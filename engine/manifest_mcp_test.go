package engine_test

import (
	"context"
	"slices"
	"testing"

	"keep/connectors/mcp/mcptest"
	"keep/engine/api"
	"keep/engine/config"
)

// A proposal that calls ctx.mcp.memory.create_entities is summarised as a
// mutation (the tool is one: config's reads names others), its read as a
// read, and its dry run performs neither before the person accepts.
func TestAProposalsMCPToolIsSummarisedAsAMutation(t *testing.T) {
	t.Parallel()
	h := mcpHost(t, map[string]config.MCP{"memory": {Command: mcptest.Bin(t, "mcp-server-memory"),
		Env:   map[string]config.MCPEnv{"MEMORY_FILE_PATH": {Value: t.TempDir() + "/memory.jsonl"}},
		Reads: []string{"read_graph", "search_nodes", "open_nodes"}}})
	p, err := h.API.Propose(context.Background(), api.ProposalRequest{Workflow: "people", FileName: "people.js",
		Source: []byte(peopleWorkflow), Origin: api.OriginMCP, Reason: "remember people"})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Summary
	if !slices.Equal(s.Mutations, []string{"mcp.memory.create_entities"}) || !slices.Equal(s.Reads, []string{"mcp.memory.search_nodes"}) {
		t.Fatalf("summary mutations %v reads %v, want the tool as a mutation and search_nodes as a read", s.Mutations, s.Reads)
	}
	if !slices.Contains(s.Adds, "mutation mcp.memory.create_entities") {
		t.Errorf("adds %v", s.Adds)
	}
	if p.DryRun == nil {
		t.Fatalf("no dry run: %s", p.DryRunError)
	}
	for _, r := range p.DryRun.Reads {
		if r.Performed {
			t.Errorf("the dry run performed %s.%s", r.Connector, r.Method)
		}
	}
}
