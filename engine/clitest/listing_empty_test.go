package clitest

import (
	"strings"
	"testing"
)

// TestListingsOfNothing: every listing command, run by the one listing
// runner, prints an empty JSON array (never null) with --json, and says in
// words that there is nothing without it.
func TestListingsOfNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"workflows"}, "no workflows; deploy one with: keep deploy FILE"},
		{[]string{"attention"}, "nothing needs your attention"},
		{[]string{"auth", "list"}, "no accounts are configured"},
	} {
		if r := e.ok(append(c.args, "--json")...); strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("keep %s --json: want [], got %s", strings.Join(c.args, " "), r)
		}
		if r := e.ok(c.args...); !strings.Contains(r.stdout, c.words) {
			t.Errorf("keep %s: want %q, got %s", strings.Join(c.args, " "), c.words, r)
		}
	}
	wf := e.file(e.dir, "idle.js", `export default Keep.workflow({ name: "idle", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {} } }, consumers: {} });`)
	e.ok("deploy", wf)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"inputs", "idle"}, "no inputs"},
		{[]string{"events", "idle"}, "no events"},
		{[]string{"runs", "idle"}, "no runs"},
		{[]string{"mutations", "idle"}, "no mutations"},
		{[]string{"grants", "idle"}, "no grants"},
	} {
		if r := e.ok(append(c.args, "--json")...); strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("keep %s --json: want [], got %s", strings.Join(c.args, " "), r)
		}
		if r := e.ok(c.args...); strings.TrimSpace(r.stdout) != c.words {
			t.Errorf("keep %s: want %q, got %s", strings.Join(c.args, " "), c.words, r)
		}
	}
	// a listing of a workflow that is not there fails (exit 1), never lists nothing
	for _, args := range [][]string{{"inputs", "ghost"}, {"events", "ghost", "--json"}, {"grants", "ghost"}} {
		if r := e.keep(args...); r.code != 1 || strings.TrimSpace(r.stdout) != "" {
			t.Errorf("keep %s: want exit 1 and no output, got %s", strings.Join(args, " "), r)
		}
	}
}
