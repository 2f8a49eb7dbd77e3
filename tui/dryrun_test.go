package tui

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
)

// DryRun implements engine.API for the stub: it records the call and
// answers with one captured mutation waiting for approval.
func (s *stubAPI) DryRun(ctx context.Context, workflow string, opts api.TryOptions) (*api.TryReport, error) {
	s.mu.Lock()
	s.calls = append(s.calls, "dry-run "+workflow)
	s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	return &api.TryReport{Workflow: workflow, StartedFrom: "empty",
		Inputs: []api.TryInput{{Source: "files", Type: "file", ExternalID: "a.txt", Title: "Note a.txt"}},
		Mutations: []api.TryMutation{{Connector: "files", Method: "write", Preview: "write out/a.txt (5 bytes): \"hello\"",
			CausedBy: []string{"Note a.txt"}, NeedsApproval: true, Approval: "waits for your approval: the workflow has no grant for files.write"}},
		Runs: []api.TryRun{{RunView: api.RunView{Handler: "scan", HandlerType: "producer", Status: "committed"}}}}, nil
}

// Script implements engine.API for the stub.
func (s *stubAPI) Script(ctx context.Context, workflow string) (*api.ScriptView, error) {
	return &api.ScriptView{Workflow: workflow, Version: "1", FileName: workflow + ".js", Source: "// " + workflow}, nil
}

func TestDryRunKeyShowsWhatTheNextRunWouldDo(t *testing.T) {
	h := newHarness(t, newStub(), 120, 40)
	h.keys("1", "d")
	screen := h.screen()
	for _, want := range []string{"Dry run · email-to-sheets", "write out/a.txt", "for Note a.txt", "waits for your approval", "producer scan: committed"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the dry run view lacks %q:\n%s", want, screen)
		}
	}
	if got := h.api.calls; len(got) == 0 || got[len(got)-1] != "dry-run email-to-sheets" {
		t.Errorf("calls = %v, want a dry run of the selected workflow", got)
	}
	h.keys("esc")
	if screen := h.screen(); strings.Contains(screen, "Dry run ·") || !strings.Contains(screen, "inbox-archive") {
		t.Errorf("esc did not bring the list back:\n%s", screen)
	}
}

// TestDryRunKeyOverTheRealEngine: the key goes through engine.API to the
// engine's own dry run; the note's copy is shown, not made.
func TestDryRunKeyOverTheRealEngine(t *testing.T) {
	r := newRealEngine(t)
	r.Write("inbox/a.txt", "hello")
	r.Deploy("notes", []byte(copyWorkflow))
	h := r.harness(r.API, 120, 40)
	h.keys("1", "d")
	screen := h.screen()
	if !strings.Contains(screen, "Dry run · notes") || !strings.Contains(screen, "out/a.txt") ||
		!strings.Contains(screen, "waits for your approval") {
		t.Fatalf("the dry run over the engine shows:\n%s", screen)
	}
	if got := r.Read("out/a.txt"); got != "" {
		t.Fatalf("a dry run wrote out/a.txt: %q", got)
	}
	runs, err := r.E.Runs(context.Background(), "notes", api.Page{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("the real database has runs after a dry run: %v %v", runs, err)
	}
}
