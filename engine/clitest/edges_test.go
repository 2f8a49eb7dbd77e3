package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmallEdges: the help shows -o as the usage line does; the same file
// deployed again is not a new version; --config naming a missing file
// says so and what the defaults are; the README keeps the sandbox's
// internals out of the first steps and says feed ETags survive a restart.
func TestSmallEdges(t *testing.T) {
	t.Parallel()

	t.Run("help new shows -o", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		r := e.ok("help", "new")
		if !strings.Contains(r.stdout, "\n  -o ") || strings.Contains(r.stdout, "--o ") {
			t.Errorf("keep help new:\n%s", r.stdout)
		}
	})

	t.Run("an unchanged file deployed again is not a new version", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.deployLines()
		wf := filepath.Join(e.dir, "lines.js")
		r := e.ok("deploy", wf)
		if !strings.Contains(r.stdout, "lines version 1 unchanged") {
			t.Errorf("deploying the same file again says:\n%s", r.stdout)
		}
		if err := os.WriteFile(wf, []byte(filesWorkflow+"\n// changed\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := e.ok("deploy", wf); !strings.Contains(r.stdout, "deployed lines version 2") {
			t.Errorf("deploying a changed file says:\n%s", r.stdout)
		}
	})

	t.Run("--config naming a missing file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		missing := filepath.Join(e.dir, "nope", "config.toml")
		r := e.expect(1, "workflows", "--config", missing)
		for _, want := range []string{missing + " does not exist", "without --config keep runs on the defaults", "keep init"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q: %s", want, r.stderr)
			}
		}
	})

	t.Run("the README", func(t *testing.T) {
		t.Parallel()
		b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		readme := string(b)
		for _, early := range []string{"A first workflow", "Writing workflows"} {
			if strings.Contains(section(t, readme, early), "RLIMIT_AS") {
				t.Errorf("%q still holds the sandbox's internals", early)
			}
		}
		if !strings.Contains(section(t, readme, "How a script runs"), "RLIMIT_AS") {
			t.Error("the sandbox's internals are not under How a script runs")
		}
		if !strings.Contains(section(t, readme, "Feeds, calendars and Google Sheets"), "survive a restart") {
			t.Error("the 304 sentence does not say ETags survive a restart")
		}
	})
}
