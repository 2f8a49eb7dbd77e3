package clitest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// section is the text of the README's "## title" section.
func section(t *testing.T, readme, title string) string {
	t.Helper()
	i := strings.Index(readme, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("the README has no section %q", title)
	}
	rest := readme[i+len("\n## "+title+"\n"):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestReadmeForANewcomer: the README says how to install keep and where it
// lands, its first example makes its folder, the demo's folder follows
// --db, and commands and concepts come before the performance internals,
// which live in a document of their own.
func TestReadmeForANewcomer(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)

	quick := section(t, readme, "Quick start")
	var cmds []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(quick, -1) {
		for _, line := range strings.Split(strings.TrimSpace(m[1]), "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if strings.Join(cmds, "|") != "go run .|go test ./..." {
		t.Errorf("the Quick start's commands are %q, want exactly go run . and go test ./...", cmds)
	}
	if strings.Contains(quick, "shared") || strings.Contains(quick, "../") {
		t.Error("the Quick start points outside the repository")
	}
	if !strings.Contains(quick, "--db DIR/keep.db") || !strings.Contains(quick, "DIR/demo/inbox") {
		t.Error("the Quick start does not say the demo's inbox follows --db")
	}

	install := section(t, readme, "Install")
	for _, want := range []string{"go install", "$(go env GOBIN)", "$(go env GOPATH)/bin", "keep service install"} {
		if !strings.Contains(install, want) {
			t.Errorf("the Install section does not say %q", want)
		}
	}
	if first := section(t, readme, "A first workflow"); !strings.Contains(first, "mkdir -p ~/Keep/inbox") {
		t.Error("the first workflow does not create its folder")
	}

	perf := section(t, readme, "Performance")
	if strings.Index(readme, "\n## Commands\n") > strings.Index(readme, "\n## Performance\n") {
		t.Error("the commands come after the performance section")
	}
	if n := strings.Count(perf, "\n"); n > 12 {
		t.Errorf("the Performance section is %d lines: its internals belong in the linked document", n)
	}
	const doc = "engine/benchmark/README.md"
	if !strings.Contains(perf, "]("+doc+")") {
		t.Errorf("the Performance section does not link %s", doc)
	}
	d, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pipeline_runs_per_s", "floor_ratio", "## What reaches the disk when"} {
		if !strings.Contains(string(d), want) {
			t.Errorf("%s lacks %q", doc, want)
		}
	}
}
