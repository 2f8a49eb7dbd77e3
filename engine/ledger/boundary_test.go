package ledger

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"keep/engine/enginetest/walk"
	"keep/storage"
)

// forgers are the files outside the ledger allowed to call a status writer,
// each with why: a test that forges on disk what a move cannot make.
var forgers = map[string]string{
	"engine/crash_test.go": "rewinds the ledger to what a SIGKILL mid-call leaves on disk (an applied row back in flight)",
}

// statusWriterCalls is every call of a storage status writer (by name) in
// the Go files under root, but for storage's own files and this package's,
// as "path:line Name" keyed by path.
func statusWriterCalls(t *testing.T, root string) map[string][]string {
	t.Helper()
	calls := map[string][]string{}
	for _, c := range walk.Calls(t, root, storage.StatusWriters, func(rel string, dir bool) bool {
		in := path.Dir(rel)
		return !dir && (in == "storage" || in == "engine/ledger")
	}) {
		file, _, _ := strings.Cut(c, ":")
		calls[file] = append(calls[file], c)
	}
	return calls
}

func writeFile(path, src string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(src), 0o644)
}

// TestOnlyTheLedgerWritesStatuses: no package but this one (and storage,
// which declares them) calls a status writer; storage.StatusWriters, which
// storage's own test keeps complete, names them. A forger that no longer
// forges is dropped from the list, so the exceptions cannot outlive their
// reason.
func TestOnlyTheLedgerWritesStatuses(t *testing.T) {
	calls := statusWriterCalls(t, "../..")
	var bad []string
	for path, cs := range calls {
		if _, ok := forgers[path]; !ok {
			bad = append(bad, cs...)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("status writers called outside engine/ledger (move through the ledger):\n%s", strings.Join(bad, "\n"))
	}
	for path := range forgers {
		if len(calls[path]) == 0 {
			t.Errorf("%s is listed as a forger but calls no status writer: drop it from forgers", path)
		}
	}
}

// TestBoundaryFindsCalls: the walk sees a call written the way the engine
// writes them, so the test above cannot pass by seeing nothing.
func TestBoundaryFindsCalls(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc f(tx T) { _ = tx.UpdateRun(nil, nil); tx.Other() }\n"
	if err := writeFile(filepath.Join(dir, "engine", "x.go"), src); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "engine", "ledger", "y.go"), src); err != nil {
		t.Fatal(err)
	}
	calls := statusWriterCalls(t, dir)
	if got := calls["engine/x.go"]; len(got) != 1 || got[0] != "engine/x.go:3 UpdateRun" {
		t.Fatalf("calls = %v, want the one UpdateRun of engine/x.go", calls)
	}
	if len(calls) != 1 {
		t.Fatalf("calls = %v: the ledger's own files are not counted", calls)
	}
}
