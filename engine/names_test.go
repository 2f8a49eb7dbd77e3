package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/engine/api"
)

// The red team's names: a path out of the folder, a bidi override, a
// hidden filler, a leading dot. A workflow file could carry none of them,
// so neither may deploy --name nor a proposal.
var badNames = []string{"../../x", "../victim", "a/b", "a\u202eb", "note\u3164s", ".hidden", "Notes", " notes", "..", strings.Repeat("n", 101)}

func TestEveryWorkflowNameObeysTheFileRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	for _, name := range badNames {
		if _, err := b.e.Deploy(ctx, "notes.js", []byte(notesWorkflow), name); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "workflow name") {
			t.Errorf("deploy --name %q: %v", name, err)
		}
		if _, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: name, Origin: api.OriginMCP, Source: []byte(notesWorkflow)}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "workflow name") {
			t.Errorf("propose for %q: %v", name, err)
		}
	}
	if wfs, _ := b.e.Workflows(ctx); len(wfs) != 0 {
		t.Errorf("a badly named workflow was deployed: %+v", wfs)
	}
	if _, err := b.e.Deploy(ctx, "notes.js", []byte(notesWorkflow), "notes-2"); err != nil {
		t.Errorf("deploy --name notes-2: %v", err)
	}
}
