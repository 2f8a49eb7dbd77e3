package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"keep/engine/enginetest/walk"
)

// runChoosers are storage's reads that pick the runs a move acts on — the
// run that carries a mutation, the runs that hold an input's events: the
// ledger's moves call them in their own transaction (ledger.Carrier,
// ledger.SkipInput), so the engine passes what was answered, never a run
// it chose (issue 41). A view shows the carrier through ledger.Carrier.
var runChoosers = []string{"RunsCarrying", "RunsHoldingInput"}

// runChoosingCalls is every call of a runChoosers read in the Go files
// under root, as "path:line Name", but for storage's, which declares them,
// and engine/ledger's, which alone calls them.
func runChoosingCalls(t *testing.T, root string) []string {
	t.Helper()
	return walk.Calls(t, root, runChoosers, func(rel string, dir bool) bool {
		return dir && (rel == "storage" || rel == "engine/ledger")
	})
}

// TestOnlyTheLedgerChoosesRuns: nothing outside engine/ledger (and storage)
// reads which runs a move is to act on: the engine does not choose a
// move's run before the move.
func TestOnlyTheLedgerChoosesRuns(t *testing.T) {
	if calls := runChoosingCalls(t, ".."); len(calls) > 0 {
		t.Errorf("a move's run chosen outside engine/ledger (let the ledger's move find it; a view calls ledger.Carrier):\n%s",
			strings.Join(calls, "\n"))
	}
}

// TestRunChoosersFound: the walk sees a call written the way the engine
// wrote them, in a file of the engine or a subpackage, and leaves storage's
// and the ledger's alone, so the test above cannot pass by seeing nothing.
func TestRunChoosersFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc f(tx T) {\n\truns, err := tx.Q.RunsCarrying(ctx, m.ID)\n\ttx.Other()\n}\n"
	for _, rel := range []string{"engine/x.go", "engine/daemon/y.go", "engine/ledger/z.go", "storage/runs.go"} {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"engine/daemon/y.go:4 RunsCarrying", "engine/x.go:4 RunsCarrying"}
	if got := runChoosingCalls(t, dir); !slices.Equal(got, want) {
		t.Fatalf("calls = %v, want %v", got, want)
	}
}
