package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keep edit writes only a new file, except the file it was asked to edit:
// the red team's keep edit NAME overwrote the person's own NAME.js, and a
// name from deploy --name reached ../victim.js.
func TestEditNeverOverwritesAFileItWasNotAskedToEdit(t *testing.T) {
	t.Setenv("KEEP_TEST_LLM_KEY", "sk-test-123")
	e, fm := llmEnv(t, draftFixed(`"edited: " + p.data.name + "\n"`))
	src := e.file(e.dir, "src/notes-log.js", draftFixed(`p.data.name + "\n"`))
	e.ok("deploy", src)
	mine := e.file(e.dir, "notes-log.js", "// the person's own notes-log.js\n")
	victim := e.file(e.dir, "victim.js", "// another file\n")

	if r := e.expect(3, "edit", "notes-log", "say edited"); !strings.Contains(r.stderr, "notes-log.js already exists; not overwriting it") {
		t.Errorf("keep edit over an existing NAME.js: %s", r)
	}
	if r := e.expect(3, "edit", "notes-log", "say edited", "-o", victim); !strings.Contains(r.stderr, "already exists") {
		t.Errorf("keep edit -o over an existing file: %s", r)
	}
	for _, p := range []string{mine, victim} {
		if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), "// the person's") && !strings.HasPrefix(string(b), "// another") {
			t.Errorf("%s was overwritten: %s", p, b)
		}
	}
	if reqs := fm.requests(); len(reqs) != 0 {
		t.Errorf("the model was asked %d times for a draft that could not be written", len(reqs))
	}

	// a name the file rule refuses never reaches a path
	for _, name := range []string{"../victim", "../../x", "a\u202eb"} {
		if r := e.keep("deploy", src, "--name", name); r.code == 0 || !strings.Contains(r.stderr, "workflow name") {
			t.Errorf("deploy --name %q: %s", name, r)
		}
		if r := e.keep("edit", name, "say edited"); r.code == 0 || !strings.Contains(r.stderr, "workflow name") {
			t.Errorf("edit %q: %s", name, r)
		}
	}

	// a new file is written, and the file named to edit is rewritten
	out := filepath.Join(e.dir, "edited.js")
	e.ok("edit", "notes-log", "say edited", "-o", out)
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), `"edited: "`) {
		t.Errorf("keep edit -o NEW wrote %q", b)
	}
	e.ok("edit", src, "say edited")
	if b, _ := os.ReadFile(src); !strings.Contains(string(b), `"edited: "`) {
		t.Errorf("keep edit FILE did not rewrite it: %q", b)
	}
}
