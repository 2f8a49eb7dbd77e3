package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"keep/engine/api"
)

// throwingWorkflow's producer fails with a logic error, which blocks the
// workflow until the user retries it (no repairer is configured).
const throwingWorkflow = `
export default Keep.workflow({
  name: "thrower",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => { throw new Error("boom"); } } },
});
`

func TestRunNowIsRefusedWhenTheProducersWouldNotRun(t *testing.T) {
	t.Parallel()

	t.Run("a paused workflow names keep resume", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.deployLines()
		e.ok("pause", "lines")
		r := e.expect(3, "run-now", "lines")
		if !strings.Contains(r.stderr, "keep resume lines") || strings.Contains(r.stdout, "queued") {
			t.Errorf("run-now on a paused workflow: %s", r)
		}
	})

	t.Run("a workflow blocked by a failure names keep retry", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.ok("deploy", e.file(e.dir, "thrower.js", throwingWorkflow))
		e.ok("drain", "--timeout", "1m")
		if wfs := jsonOf[[]api.WorkflowView](e, "workflows"); wfs[0].Block == nil {
			t.Fatalf("the thrower is not blocked: %+v", wfs[0])
		}
		r := e.expect(3, "run-now", "thrower")
		if !strings.Contains(r.stderr, "keep retry thrower") || strings.Contains(r.stdout, "queued") {
			t.Errorf("run-now on a blocked workflow: %s", r)
		}
		e.ok("retry", "thrower")
	})

	t.Run("a workflow waiting on an approval names keep attention", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain", "--timeout", "1m")
		if items := jsonOf[[]api.AttentionItem](e, "attention"); len(items) == 0 || items[0].Kind != api.AttentionApproval {
			t.Fatalf("attention = %+v, want an approval", items)
		}
		r := e.expect(3, "run-now", "lines")
		if !strings.Contains(r.stderr, "keep attention") {
			t.Errorf("run-now on a workflow waiting on an approval: %s", r)
		}
	})
}

func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	cases := []struct {
		args []string
		flag string
	}{
		{[]string{"events", "lines", "--status", "bogus"}, "--status"},
		{[]string{"mutations", "lines", "--status", "bogus"}, "--status"},
		{[]string{"inputs", "lines", "--limit", "-1"}, "--limit"},
		{[]string{"events", "lines", "--limit", "-1"}, "--limit"},
		{[]string{"runs", "lines", "--limit", "-1"}, "--limit"},
		{[]string{"runs", "lines", "--limit", "ten"}, "--limit"},
		{[]string{"try", "lines.js", "--limit", "-1"}, "--limit"},
		{[]string{"grant", "lines", "files.append", "--mode", "yolo"}, "--mode"},
		{[]string{"grant", "lines", "files.append", "--limit", "-3"}, "--limit"},
		{[]string{"drain", "--timeout", "-1s"}, "--timeout"},
		{[]string{"drain", "--timeout", "0"}, "--timeout"},
		{[]string{"drain", "--timeout", "soon"}, "--timeout"},
		{[]string{"logs", "lines", "--run", "newest"}, "--run"},
		{[]string{"workflows", "--json=perhaps"}, "--json"},
		{[]string{"workflows", "--db", ""}, "--db"},
		{[]string{"approve", "first"}, "mutation id"},
		{[]string{"reject", "-"}, "mutation id"},
		{[]string{"resolve", "x", "happened"}, "mutation id"},
		{[]string{"skip", "1", "two"}, "event id"},
		{[]string{"skip-input", "0"}, "input id"},
	}
	for _, c := range cases {
		r := e.keep(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.flag) || !strings.Contains(r.stderr, "usage: keep") {
			t.Errorf("keep %s: want exit 2 naming %s with the usage line, got %s", strings.Join(c.args, " "), c.flag, r)
		}
	}
	// the good values still work
	e.ok("grant", "lines", "files.append", "--mode", "ask", "--limit", "0")
	e.ok("events", "lines", "--status", "pending", "--limit", "0")
	e.ok("mutations", "lines", "--status", "needs_reconcile")
	e.ok("drain", "--timeout", "1m")
}

// TestKeepsOwnFilesAreOutOfReachThroughTheCLI: with the roots set to a folder
// holding the database and the config (roots = ["~"]), a workflow can
// neither read the config nor overwrite the database.
func TestKeepsOwnFilesAreOutOfReachThroughTheCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	const password = "pa55-literal-in-config"
	e.writeConfig(fmt.Sprintf("[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [%q]\n\n[connectors.mail]\npassword = %q\n",
		e.dir, password))
	wf := `export default Keep.workflow({
  name: "snoop", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.files.read({ path: "config.toml" });
    console.log(r.content);
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "one" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.files.write({ path: "data/keep.db", content: "gone" }); },
    async next() {} }) },
});`
	wrecker := strings.NewReplacer(`const r = await ctx.files.read({ path: "config.toml" });`, "", "console.log(r.content);", "", `"snoop"`, `"wreck"`).Replace(wf)
	e.ok("deploy", e.file(e.dir, "snoop.js", wf))
	e.ok("deploy", e.file(e.dir, "wreck.js", wrecker))
	e.ok("drain", "--timeout", "1m")
	for _, name := range []string{"snoop", "wreck"} {
		r := e.ok("logs", name, "--json")
		if strings.Contains(r.stdout, password) {
			t.Fatalf("the config's password is in %s's trace:\n%s", name, r.stdout)
		}
		if !strings.Contains(r.stdout, "keep's own files") {
			t.Errorf("%s's trace does not say why the call was refused:\n%s", name, r.stdout)
		}
	}
	head, err := os.ReadFile(e.db)
	if err != nil || !strings.HasPrefix(string(head), "SQLite format 3") {
		t.Fatalf("keep.db is no longer a database: %v", err)
	}
	if wfs := jsonOf[[]api.WorkflowView](e, "workflows"); len(wfs) != 2 {
		t.Fatalf("workflows = %+v", wfs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "data", "keep.db")); err != nil {
		t.Fatal(err)
	}
}

// controls lists the control characters in s other than newline and tab,
// and the characters that hide or reorder text: every format character
// (bidi overrides and isolates, zero-width ones, BOM, tags) and the line
// and paragraph separators.
func controls(s string) []string {
	var out []string
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			out = append(out, fmt.Sprintf("%U", r))
		}
	}
	return out
}

func TestScriptTextCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	// the scripts plant terminal control sequences everywhere they reach
	for _, f := range []string{"planter.js", "thrower.js"} {
		p, err := filepath.Abs(filepath.Join("..", "..", "tui", "printable", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		e.ok("deploy", p)
	}
	e.ok("drain", "--timeout", "1m")
	items := jsonOf[[]api.AttentionItem](e, "attention")
	if len(items) < 2 {
		t.Fatalf("attention = %+v, want the approval and the failure", items)
	}
	mutationID := ""
	for _, it := range items {
		if it.Kind == api.AttentionApproval {
			mutationID = it.ID
		}
	}
	runs := jsonOf[[]api.RunView](e, "runs", "planter")
	logged := "" // the producer's run is the one that logs
	for _, r := range runs {
		if r.Handler == "p" {
			logged = r.ID
		}
	}
	if logged == "" {
		t.Fatalf("runs = %+v, want a run of the producer p", runs)
	}
	listings := [][]string{
		{"workflows"}, {"status", "planter"}, {"status", "thrower"}, {"inputs", "planter"}, {"events", "planter"},
		{"runs", "planter"}, {"runs", "thrower"}, {"mutations", "planter"}, {"attention"}, {"logs", "planter", "--run", logged},
		{"logs", "thrower"}, {"grants", "planter"},
	}
	for _, args := range listings {
		r := e.ok(args...)
		if c := controls(r.stdout + r.stderr); len(c) > 0 {
			t.Errorf("keep %s printed control characters %v:\n%q", strings.Join(args, " "), c, r.stdout)
		}
		j := e.ok(append(args, "--json")...)
		if c := controls(j.stdout); len(c) > 0 || !json.Valid([]byte(j.stdout)) {
			t.Errorf("keep %s --json: control characters %v, valid %v:\n%q", strings.Join(args, " "), c, json.Valid([]byte(j.stdout)), j.stdout)
		}
	}
	// the text is shown, escaped, not dropped
	for _, args := range [][]string{{"attention"}, {"logs", "planter", "--run", logged}, {"inputs", "planter"}, {"runs", "thrower"}} {
		if r := e.ok(args...); !strings.Contains(r.stdout, `\x1b]52;c;`) {
			t.Errorf("keep %s does not show the planted sequence escaped:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	// (a one-line column shows the line separator as a space; a wrapped
	// listing continues a value on lines indented by 18)
	for _, args := range [][]string{{"logs", "planter", "--run", logged}, {"attention"}, {"mutations", "planter"}} {
		r := e.ok(args...)
		if out := strings.ReplaceAll(r.stdout, "\n"+strings.Repeat(" ", 18), ""); !strings.Contains(out, `\u202e\u2066\u200b\u061c\ufeff`) || !strings.Contains(out, `\u00ad\U000e0041`) {
			t.Errorf("keep %s does not show the planted format characters escaped:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
	// errors on stderr: an answer refused with the script's text in it
	r := e.keep("run-now", "thrower")
	if c := controls(r.stderr); r.code != 3 || len(c) > 0 {
		t.Errorf("run-now on the blocked thrower: control characters %v in %s", c, r)
	}
	if mutationID == "" {
		t.Fatal("no approval to answer")
	}
	e.ok("approve", mutationID)
}
