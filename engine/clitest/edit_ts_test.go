package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keep edit of a workflow deployed from a TypeScript file drafts and checks
// TypeScript (the model is shown the .ts file), but wrote the draft to
// NAME.js, which does not load ("Expected \")\" but found \":\""), and then
// said: next, keep deploy NAME.js. The draft keeps the file's kind.
func TestEditOfATypeScriptWorkflowWritesTypeScript(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "sk-test-123")
	ts := strings.Replace(draftFixed(`p.data.name + "\n"`), "async (ctx) => {", "async (ctx: any) => {", 1)
	edited := strings.Replace(ts, `p.data.name + "\n"`, `"ts: " + p.data.name + "\n"`, 1)
	e, _ := llmEnv(t, edited)
	src := e.file(e.dir, "src/notes-log.ts", ts)
	e.ok("deploy", src)

	r := e.ok("edit", "notes-log", "prefix each line with ts:")
	out := filepath.Join(e.dir, "notes-log.ts")
	if got, err := os.ReadFile(out); err != nil || !strings.Contains(string(got), `"ts: "`) {
		t.Fatalf("the draft is not in %s (%v): %s", out, err, r)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "notes-log.js")); err == nil {
		t.Errorf("TypeScript was written to notes-log.js")
	}
	if !strings.Contains(r.stdout, "next: keep deploy notes-log.ts") {
		t.Errorf("keep edit names another file to deploy:\n%s", r.stdout)
	}
	e.ok("validate", out)
}
