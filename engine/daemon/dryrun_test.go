package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/engine/api"
)

// TestDryRunAndScriptAcrossTheSocket: a front end attached to the daemon
// gets the same dry run and script as the engine gives in-process.
func TestDryRunAndScriptAcrossTheSocket(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Root, "inbox", "a.txt"), []byte("alpha"), 0o600); err != nil {
		t.Fatal(err)
	}
	direct, err := wholeOf(b.E).DryRun(ctx, "notes", api.TryOptions{Producer: "scan", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := b.c.DryRun(ctx, "notes", api.TryOptions{Producer: "scan", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(direct.Mutations) != 2 || len(remote.Mutations) != 2 || remote.Mutations[0].Preview != direct.Mutations[0].Preview ||
		len(remote.Runs) != len(direct.Runs) || remote.StartedFrom != direct.StartedFrom {
		t.Fatalf("dry run in-process %+v\nover the socket %+v", direct, remote)
	}
	_, derr := wholeOf(b.E).DryRun(ctx, "notes", api.TryOptions{Producer: "nosuch"})
	_, rerr := b.c.DryRun(ctx, "notes", api.TryOptions{Producer: "nosuch"})
	if derr == nil || rerr == nil || derr.Error() != rerr.Error() {
		t.Errorf("an unknown producer: engine %v, client %v", derr, rerr)
	}
	sv, err := b.c.Script(ctx, "notes")
	if err != nil || sv.Source != notesWorkflow || sv.FileName != "notes.js" || sv.Version != "1" {
		t.Fatalf("script over the socket = %+v (%v)", sv, err)
	}
	if _, err := b.c.Script(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown workflow's script: %v", err)
	}
}
