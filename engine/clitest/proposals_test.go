package clitest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestRepairProposesThroughTheCLI: with [repair] enabled, a logic failure
// becomes a proposal that `keep attention` lists with its summary and dry
// run, and `keep attention pN` with its diff too; nothing is written until
// `keep approve pN`; `keep reject pN` drops one.
func TestRepairProposesThroughTheCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	fixed := e.file(e.dir, "fixed.js", filesWorkflow)
	e.writeConfig(fmt.Sprintf("[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [%q]\n\n[repair]\nenabled = true\ncommand = %q\n",
		e.root, "cat "+fixed))
	e.file(e.root, "inbox/a.txt", "alpha")
	broken := strings.Replace(filesWorkflow, `const [ev] = await ctx.peek("file.found", { limit: 1 });`,
		`throw new Error("bug in prepare"); const [ev] = await ctx.peek("file.found", { limit: 1 });`, 1)
	e.ok("deploy", e.file(e.dir, "lines.js", broken))
	e.ok("drain")
	if got := e.read("out.txt"); got != "" {
		t.Fatalf("out.txt = %q before anyone accepted the repair", got)
	}
	r := e.ok("attention")
	id := regexp.MustCompile(`(?m)^proposal · lines · (p\d+)$`).FindStringSubmatch(r.stdout)
	// its dry run reads nothing for real (issue 39): the inbox is not
	// listed, so it shows no append; the person sees it was captured
	const captured = "dry run (reads and mutations captured, nothing changed)"
	if id == nil || strings.Contains(r.stdout, `-        throw new Error("bug in prepare");`) ||
		!strings.Contains(r.stdout, captured) || !strings.Contains(r.stdout, "keep attention "+id[1]+" shows it") {
		t.Fatalf("keep attention does not list the proposal with its dry run and without its diff:\n%s", r)
	}
	if r := e.ok("attention", id[1]); !strings.Contains(r.stdout, `-        throw new Error("bug in prepare");`) ||
		!strings.Contains(r.stdout, captured) {
		t.Fatalf("keep attention %s does not show the proposal with its diff and dry run:\n%s", id[1], r)
	}
	var items []struct{ Kind, ID string }
	if err := json.Unmarshal([]byte(e.ok("attention", "--json").stdout), &items); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range items {
		found = found || it.Kind == "proposal" && it.ID == id[1]
	}
	if !found {
		t.Fatalf("keep attention --json = %+v, want the proposal %s", items, id[1])
	}
	e.expect(2, "approve", id[1], "--always")
	r = e.ok("approve", id[1])
	// accepting says which grants made before the new version it may use
	if !strings.Contains(r.stdout, "accepted proposal "+id[1]) || !strings.Contains(r.stdout, "lines is now version 2") ||
		!regexp.MustCompile(`it uses your grants:\n(?s:.*)files\.append +allow`).MatchString(r.stdout) {
		t.Fatalf("keep approve %s: %s", id[1], r)
	}
	e.ok("drain")
	if got := e.read("out.txt"); got != "a.txt\n" {
		t.Fatalf("out.txt = %q after accepting", got)
	}
	e.expect(3, "reject", id[1])
}

// TestRepairIsItsOwnOptIn: [llm] set for keep new does not turn repair on.
func TestRepairIsItsOwnOptIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.writeConfig(fmt.Sprintf("[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [%q]\n\n[llm]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n", e.root))
	e.file(e.root, "inbox/a.txt", "alpha")
	broken := strings.Replace(filesWorkflow, `const [ev] = await ctx.peek("file.found", { limit: 1 });`,
		`throw new Error("bug in prepare"); const [ev] = await ctx.peek("file.found", { limit: 1 });`, 1)
	e.ok("deploy", e.file(e.dir, "lines.js", broken))
	e.ok("drain")
	r := e.ok("attention", "--json")
	if !strings.Contains(r.stdout, "bug in prepare") || strings.Contains(r.stdout, "proposal") || strings.Contains(r.stdout, "repair") {
		t.Fatalf("a repair was tried with only [llm] set:\n%s", r)
	}
}

// TestTryExitsNonZeroWhenARunFails: keep try prints its report (text or
// --json) and exits 1 when a run of the dry run failed; 0 when none did.
func TestTryExitsNonZeroWhenARunFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.file(e.root, "inbox/a.txt", "alpha")
	good := e.file(e.dir, "lines.js", filesWorkflow)
	e.ok("try", good)
	bad := e.file(e.dir, "bad.js", strings.Replace(filesWorkflow, `const [ev] = await ctx.peek("file.found", { limit: 1 });`,
		`throw new Error("bug in prepare");`, 1))
	r := e.expect(1, "try", bad)
	if !strings.Contains(r.stdout, "mutations it would make (0)") || !strings.Contains(r.stderr, "run(s) of the dry run failed") ||
		!strings.Contains(r.stderr, "bug in prepare") {
		t.Fatalf("keep try of a failing workflow: %s", r)
	}
	// a script's error stays on keep's line: its newline and escape are shown, not acted on
	forged := e.file(e.dir, "forged.js", strings.Replace(filesWorkflow, `const [ev] = await ctx.peek("file.found", { limit: 1 });`,
		`throw new Error("x\nkeep: nothing failed\x1b[2J");`, 1))
	r = e.expect(1, "try", forged)
	if !strings.Contains(r.stderr, `x\nkeep: nothing failed\x1b[2J`) || strings.Contains(r.stderr, "\nkeep: nothing failed") {
		t.Fatalf("keep try printed a script's error raw: %q", r.stderr)
	}
	r = e.expect(1, "try", bad, "--json")
	var rep struct{ Runs []struct{ Status string } }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Runs) == 0 {
		t.Fatalf("keep try --json of a failing workflow printed no report: %v\n%s", err, r)
	}
}
