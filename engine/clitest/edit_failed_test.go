package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keep edit FILE rewrites FILE with a working draft, shown as a diff the
// person can undo. A model that never got there left the person's working
// file replaced by its broken draft, with no diff and no copy: the file
// stays as it was, and the failed draft is written beside it.
func TestEditOfAFileKeepsItWhenTheModelFails(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "sk-test-123")
	e, fm := llmEnv(t, draftBroken)
	working := draftFixed(`p.data.name + "\n"`)
	mine := e.file(e.dir, "mine.js", working)
	beside := filepath.Join(e.dir, "mine.draft.js")

	r := e.expect(1, "edit", mine, "prefix each line with note:")
	if reqs := fm.requests(); len(reqs) != 3 {
		t.Fatalf("%d requests to the model, want 3 rounds", len(reqs))
	}
	if got, _ := os.ReadFile(mine); string(got) != working {
		t.Errorf("the person's file was replaced by the failed draft:\n%s", got)
	}
	got, err := os.ReadFile(beside)
	if err != nil || !strings.HasPrefix(string(got), "// keep: THIS DRAFT DOES NOT WORK YET") || !strings.HasSuffix(string(got), draftBroken) {
		t.Fatalf("the failed draft is not beside the file, marked: %q (%v)", got, err)
	}
	// what is wrong is said of the file that holds it
	if !strings.Contains(r.stderr, "wrote the last draft to "+beside) || !strings.Contains(r.stderr, beside+":") ||
		!strings.Contains(string(got), beside+":") || !strings.Contains(r.stderr, mine+" is as it was") {
		t.Errorf("the messages do not name %s, or do not say %s is kept:\n%s\n%s", beside, mine, r.stderr, got)
	}

	// a second failure does not overwrite the first draft either
	if r := e.expect(3, "edit", mine, "again"); !strings.Contains(r.stderr, beside+" already exists") {
		t.Errorf("a second failed edit: %s", r)
	}
	if got, _ := os.ReadFile(mine); string(got) != working {
		t.Errorf("the person's file changed on the second failure:\n%s", got)
	}
}
