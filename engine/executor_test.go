package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"keep/engine/enginetest/walk"
	"keep/engine/ledger"
	"keep/storage"
)

// afterCommit are what a ledger decision asks once its transaction commits:
// only apply (machine.go) does them, so a move cannot forget its repair or
// its consumers, nor do them for a transaction that rolled back.
var afterCommit = []string{"markAllConsumers", "maybeRepair"}

// executorFile is the one file allowed to call them.
const executorFile = "machine.go"

// afterCommitCalls is every call of an afterCommit function (by name, as a
// method or a plain call) in the Go files of dir (not its subdirectories),
// as "file:line name", machine.go's left out.
func afterCommitCalls(t *testing.T, dir string) []string {
	t.Helper()
	return walk.Calls(t, dir, afterCommit, func(rel string, isDir bool) bool {
		return isDir || rel == executorFile
	})
}

// TestOneExecutor: no file of the engine package but machine.go asks for a
// repair or marks every consumer by hand; a move says so in its decision
// and apply does it once the move commits (issue 41).
func TestOneExecutor(t *testing.T) {
	if calls := afterCommitCalls(t, "."); len(calls) > 0 {
		t.Errorf("called outside %s (return it in the move's ledger.Decision and run the move through apply):\n%s",
			executorFile, strings.Join(calls, "\n"))
	}
}

// TestOneExecutorFindsCalls: the walk sees calls written the way the engine
// writes them, and leaves machine.go's alone, so the test above cannot pass
// by seeing nothing.
func TestOneExecutorFindsCalls(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc (e *E) f() {\n\te.markAllConsumers(ctx, ws, w)\n\tmaybeRepair(ctx, w, run)\n\te.other()\n}\n"
	for _, name := range []string{"x.go", executorFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"x.go:4 markAllConsumers", "x.go:5 maybeRepair"}
	if got := afterCommitCalls(t, dir); !slices.Equal(got, want) {
		t.Fatalf("calls = %v, want %v", got, want)
	}
}

// TestActRefusesWhatFollowsACommit: a decision asking for a repair or its
// consumers marked, acted on outside apply, is refused instead of losing
// what it asked once the transaction commits.
func TestActRefusesWhatFollowsACommit(t *testing.T) {
	e := &Engine{}
	for _, d := range []ledger.Decision{{MarkConsumers: true}, {Repair: &storage.Run{ID: 1}}} {
		if err := e.act(context.Background(), nil, nil, d); err == nil {
			t.Errorf("act(%+v) = nil, want refused: it is apply's", d)
		}
	}
}
