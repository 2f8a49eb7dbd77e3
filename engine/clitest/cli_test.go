package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/daemon"
	"keep/engine/enginetest/kit"
)

// keepBin is the real binary, built once by TestMain.
var keepBin string

func TestMain(m *testing.M) { kit.RunWithKeep(m, &keepBin) }

// filesWorkflow: a producer lists inbox/*.txt, registers each as an input and
// publishes it; a consumer appends one line per event to out.txt.
const filesWorkflow = `
export default Keep.workflow({
  name: "lines",
  topics: { "file.found": {} },
  producers: {
    scan: {
      publishes: ["file.found"],
      schedule: { interval: "5m" },
      handler: async (ctx, state) => {
        const files = await ctx.files.list({ dir: "inbox", glob: "*.txt" });
        for (const f of files) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "File " + f.name });
          await ctx.publish("file.found", { messageId: f.path, inputId, payload: { path: f.path, name: f.name } });
        }
        console.log("found " + files.length + " files");
        return { seen: (state?.seen ?? 0) + files.length };
      },
    },
  },
  consumers: {
    append: Keep.consumer({
      subscribe: ["file.found"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("file.found", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "file.found", ids: [ev.messageId] }],
          data: { line: ev.payload.name + "\n" },
          ui: { title: "Append " + ev.payload.name },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "out.txt", content: prepared.data.line });
      },
      async next() {},
    }),
  },
});
`

// brokenWorkflow subscribes to a topic it never declares.
const brokenWorkflow = `
export default Keep.workflow({
  name: "broken",
  topics: { "a": {} },
  consumers: {
    c: Keep.consumer({
      subscribe: ["nope"],
      async prepare(ctx) { return { reservations: [], data: {} }; },
      async mutate(ctx, prepared) {},
      async next() {},
    }),
  },
});
`

// env is one isolated keep setup: a database, a config file and the files
// connector's root, all in a temp dir.
type env struct {
	t      *testing.T
	dir    string
	db     string
	config string
	root   string
	// extra is added to the environment of every keep this env runs
	// (KEY=VALUE): what a config's *_env settings name.
	extra []string
}

func newEnv(t *testing.T, mutationMode string) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, db: filepath.Join(dir, "data", "keep.db"), config: filepath.Join(dir, "config.toml"),
		root: filepath.Join(dir, "root")}
	if err := os.MkdirAll(e.root, 0o700); err != nil {
		t.Fatal(err)
	}
	e.writeConfig(fmt.Sprintf("[policy]\ndefault_mutation_mode = %q\n\n[connectors.files]\nroots = [%q]\n", mutationMode, e.root))
	return e
}

func (e *env) writeConfig(text string) {
	e.t.Helper()
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// file writes a file under dir and returns its path.
func (e *env) file(dir, rel, content string) string {
	e.t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
	return string(b)
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// environ is the test process's environment without anything that would
// point keep at the user's own files.
func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KEEP_DB", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+e.dir, "XDG_CONFIG_HOME="+filepath.Join(e.dir, "xdg-config"),
		"XDG_DATA_HOME="+filepath.Join(e.dir, "xdg-data"))
	return append(out, e.extra...)
}

// command is keep with this env's --db and --config.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, keepBin, append([]string{"--db", e.db, "--config", e.config}, args...)...)
	cmd.Env = e.environ()
	cmd.Dir = e.dir
	return cmd
}

// raw runs keep with exactly these arguments (no --db or --config).
func (e *env) raw(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, keepBin, args...)
	cmd.Env = e.environ()
	cmd.Dir = e.dir
	return runCmd(e.t, cmd)
}

// keep runs keep with this env's --db and --config.
func (e *env) keep(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return runCmd(e.t, e.command(ctx, args...))
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := runUnlessBusy(cmd)
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return r
}

// runUnlessBusy runs cmd, and again while its executable is "text file
// busy": a binary a test has just written can still be open for writing in
// a child another test forked at that moment, until that child's exec
// closes it (Go's own tests retry the same way).
func runUnlessBusy(cmd *exec.Cmd) error {
	for try := 0; ; try++ {
		err := cmd.Run()
		if try == 50 || !errors.Is(err, syscall.ETXTBSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
		next := exec.Command(cmd.Path, cmd.Args[1:]...)
		next.Env, next.Dir, next.Stdin, next.Stdout, next.Stderr = cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
		next.ExtraFiles, next.SysProcAttr = cmd.ExtraFiles, cmd.SysProcAttr
		cmd = next
	}
}

// ok runs keep and fails the test unless it exits 0.
func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.keep(args...)
	if r.code != 0 {
		e.t.Fatalf("keep %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// expect runs keep and fails the test unless it exits with code.
func (e *env) expect(code int, args ...string) result {
	e.t.Helper()
	r := e.keep(args...)
	if r.code != code {
		e.t.Fatalf("keep %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// jsonOf runs keep with --json and decodes its output into T.
func jsonOf[T any](e *env, args ...string) T {
	e.t.Helper()
	r := e.ok(append(args, "--json")...)
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		e.t.Fatalf("keep %s --json: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return v
}

// deployLines writes the workflow and two inbox files and deploys it.
func (e *env) deployLines() {
	e.t.Helper()
	e.file(e.root, "inbox/a.txt", "alpha")
	e.file(e.root, "inbox/b.txt", "beta")
	wf := e.file(e.dir, "lines.js", filesWorkflow)
	e.ok("deploy", wf)
}

var diagLine = regexp.MustCompile(`(?m)^\S*broken\.js:\d+:\d+: .+$`)

func TestValidate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")

	good := e.file(e.dir, "lines.js", filesWorkflow)
	r := e.ok("validate", good)
	if !strings.Contains(r.stdout, "ok") || !strings.Contains(r.stdout, "lines") {
		t.Errorf("validate of a good file says: %s", r)
	}
	if _, err := os.Stat(e.db); err == nil {
		t.Error("validate created the database; it needs none")
	}

	broken := e.file(e.dir, "broken.js", brokenWorkflow)
	r = e.expect(1, "validate", broken)
	if !diagLine.MatchString(r.stderr) {
		t.Errorf("want file:line:col: message on stderr, got %s", r)
	}
	if !strings.Contains(r.stderr, "nope") {
		t.Errorf("the diagnostic does not name the undeclared topic: %s", r)
	}

	// deploy refuses the same file with the same diagnostics
	r = e.expect(1, "deploy", broken)
	if !diagLine.MatchString(r.stderr) {
		t.Errorf("deploy of a broken file: want file:line:col: message, got %s", r)
	}

	r = e.expect(1, "validate", filepath.Join(e.dir, "missing.js"))
	if !strings.HasPrefix(r.stderr, "keep: ") {
		t.Errorf("a missing file: want a keep: message, got %s", r)
	}
}

func TestPipeline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.file(e.root, "inbox/a.txt", "alpha")
	e.file(e.root, "inbox/b.txt", "beta")
	wf := e.file(e.dir, "lines.js", filesWorkflow)

	dep := jsonOf[api.DeployResult](e, "deploy", wf)
	if dep.Workflow != "lines" || dep.Version != 1 || !dep.Created {
		t.Fatalf("deploy result = %+v", dep)
	}
	found := false
	for _, c := range dep.Capabilities {
		found = found || c.Capability == "files.append"
	}
	if !found {
		t.Errorf("deploy capabilities %+v lack files.append", dep.Capabilities)
	}
	// the human form prints the version and the capabilities with their
	// modes (a changed file: the same one again is no new version)
	e.file(e.dir, "lines.js", filesWorkflow+"\n// version 2\n")
	r := e.ok("deploy", wf, "--name", "lines")
	if !strings.Contains(r.stdout, "version 2") || !strings.Contains(r.stdout, "files.append") {
		t.Errorf("deploy says: %s", r)
	}

	e.ok("drain", "--timeout", "1m")
	if got := e.read("out.txt"); got != "a.txt\nb.txt\n" {
		t.Fatalf("out.txt = %q", got)
	}

	wfs := jsonOf[[]api.WorkflowView](e, "workflows")
	if len(wfs) != 1 || wfs[0].Name != "lines" || wfs[0].Status != "active" || wfs[0].Version != 2 {
		t.Fatalf("workflows = %+v", wfs)
	}
	if wfs[0].NextRun == nil {
		t.Error("workflows: no next run for a scheduled producer")
	}
	r = e.ok("workflows")
	if !strings.Contains(r.stdout, "NAME") || !strings.Contains(r.stdout, "lines") {
		t.Errorf("workflows table: %s", r)
	}

	st := jsonOf[api.WorkflowDetail](e, "status", "lines")
	if st.Name != "lines" || len(st.Handlers) != 2 || st.Counts.InputsDone != 2 {
		t.Errorf("status = %+v", st)
	}
	e.ok("status", "lines")

	ins := jsonOf[[]api.InputView](e, "inputs", "lines")
	if len(ins) != 2 {
		t.Fatalf("inputs = %+v", ins)
	}
	for _, in := range ins {
		if in.Status != api.InputDone || len(in.Outputs) != 1 || in.Outputs[0].Status != "applied" ||
			in.Outputs[0].Connector != "files" || in.Outputs[0].Method != "append" {
			t.Errorf("input %+v", in)
		}
	}
	r = e.ok("inputs", "lines")
	if !strings.Contains(r.stdout, "File a.txt") || !strings.Contains(r.stdout, "Append a.txt") {
		t.Errorf("inputs table lacks the input or its output: %s", r)
	}

	runs := jsonOf[[]api.RunView](e, "runs", "lines")
	var producer, consumer int
	for _, run := range runs {
		switch run.HandlerType {
		case "producer":
			producer++
		case "consumer":
			consumer++
		}
	}
	if producer < 1 || consumer < 2 {
		t.Errorf("runs: %d producer, %d consumer runs: %+v", producer, consumer, runs)
	}
	e.ok("runs", "lines")

	ms := jsonOf[[]api.MutationView](e, "mutations", "lines")
	if len(ms) != 2 {
		t.Fatalf("mutations = %+v", ms)
	}
	for _, m := range ms {
		if m.Status != "applied" || m.Connector != "files" || m.Method != "append" || !strings.HasPrefix(m.UITitle, "Append ") {
			t.Errorf("mutation %+v", m)
		}
	}
	if got := jsonOf[[]api.MutationView](e, "mutations", "lines", "--status", "failed"); len(got) != 0 {
		t.Errorf("failed mutations = %+v", got)
	}
	// an empty list is [] and not null
	if r := e.ok("mutations", "lines", "--status", "failed", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("empty list printed as %q", r.stdout)
	}
	e.ok("mutations", "lines")

	evs := jsonOf[[]api.EventView](e, "events", "lines", "--topic", "file.found")
	if len(evs) != 2 {
		t.Fatalf("events = %+v", evs)
	}
	for _, ev := range evs {
		if ev.Topic != "file.found" || ev.Status != "consumed" || len(ev.CausedBy) != 1 {
			t.Errorf("event %+v", ev)
		}
	}
	if got := jsonOf[[]api.EventView](e, "events", "lines", "--status", "pending"); len(got) != 0 {
		t.Errorf("pending events = %+v", got)
	}
	e.ok("events", "lines")

	// logs: the trace of the producer run shows its call and its console line
	var prodRun string
	for _, run := range runs {
		if run.HandlerType == "producer" {
			prodRun = run.ID
		}
	}
	trace := jsonOf[[]api.TraceLine](e, "logs", "lines", "--run", prodRun)
	var sawCall, sawLog bool
	for _, l := range trace {
		sawCall = sawCall || (l.Kind == "call" && l.Connector == "files" && l.Method == "list")
		sawLog = sawLog || (l.Kind == "log" && strings.Contains(l.Args+l.Result, "found 2 files"))
	}
	if !sawCall {
		t.Errorf("trace of run %s lacks the files.list call: %+v", prodRun, trace)
	}
	if !sawLog {
		t.Errorf("trace of run %s lacks the console line: %+v", prodRun, trace)
	}
	r = e.ok("logs", "lines", "--run", prodRun)
	if !strings.Contains(r.stdout, "files.list(") || !strings.Contains(r.stdout, "found 2 files") {
		t.Errorf("logs --run %s: %s", prodRun, r)
	}
	r = e.ok("logs", "lines")
	if !strings.Contains(r.stdout, "run "+runs[0].ID) {
		t.Errorf("logs without --run should show the newest run %s: %s", runs[0].ID, r)
	}

	grants := jsonOf[[]api.GrantView](e, "grants", "lines")
	if len(grants) == 0 {
		t.Errorf("grants = %+v", grants)
	}
	e.ok("grant", "lines", "files.append", "--mode", "ask", "--limit", "5")
	grants = jsonOf[[]api.GrantView](e, "grants", "lines")
	var g *api.GrantView
	for i := range grants {
		if grants[i].Capability == "files.append" {
			g = &grants[i]
		}
	}
	if g == nil || g.Mode != "ask" || g.DailyLimit != 5 {
		t.Errorf("after grant: %+v", grants)
	}
	e.expect(1, "grant", "lines", "files.list")

	// drain again: the producer is not due, nothing is mutated again (a new
	// engine process may look at its consumers once: recovery marks them dirty)
	e.ok("drain")
	producers := func(runs []api.RunView) (n int) {
		for _, r := range runs {
			if r.HandlerType == "producer" {
				n++
			}
		}
		return n
	}
	if got := jsonOf[[]api.RunView](e, "runs", "lines"); producers(got) != producers(runs) {
		t.Errorf("a second drain ran the producer again: %+v", got)
	}
	if got := jsonOf[[]api.MutationView](e, "mutations", "lines"); len(got) != 2 {
		t.Errorf("a second drain made mutations: %+v", got)
	}
	if got := e.read("out.txt"); got != "a.txt\nb.txt\n" {
		t.Errorf("out.txt after a second drain = %q", got)
	}

	// attention is empty: []
	if r := e.ok("attention", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("attention = %s", r.stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	for _, args := range [][]string{
		{"frobnicate"},
		{"deploy"},
		{"status"},
		{"runs", "a", "b"},
		{"workflows", "--bogus"},
		{"resolve", "1", "perhaps"},
		{"--nope"},
	} {
		r := e.keep(args...)
		if r.code != 2 {
			t.Errorf("keep %v: want exit 2, got %s", args, r)
			continue
		}
		if !strings.Contains(r.stderr, "usage: keep") || !strings.HasPrefix(r.stderr, "keep: ") {
			t.Errorf("keep %v: want a keep: message and a usage line on stderr, got %s", args, r)
		}
	}
	if r := e.ok("help"); !strings.Contains(r.stdout, "deploy FILE") {
		t.Errorf("help: %s", r)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	for _, args := range [][]string{{"status", "ghost"}, {"runs", "ghost"}, {"pause", "ghost"}, {"approve", "999"}} {
		r := e.keep(args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "keep: ") {
			t.Errorf("keep %v: want exit 1 with a keep: message, got %s", args, r)
		}
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	e.ok("pause", "lines")
	wfs := jsonOf[[]api.WorkflowView](e, "workflows")
	if wfs[0].Status != "paused" || wfs[0].State != api.StatePaused {
		t.Fatalf("after pause: %+v", wfs)
	}
	r := e.expect(3, "run-now", "lines")
	if !strings.HasPrefix(r.stderr, "keep: ") {
		t.Errorf("run-now on a paused workflow: %s", r)
	}
	e.expect(3, "pause", "lines")
	e.ok("resume", "lines")
	e.ok("run-now", "lines")
	e.ok("drain")
	if got := e.read("out.txt"); got != "a.txt\nb.txt\n" {
		t.Errorf("out.txt = %q", got)
	}
}

func TestApproveFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()
	e.ok("drain")
	if got := e.read("out.txt"); got != "" {
		t.Fatalf("a mutation ran without approval: out.txt = %q", got)
	}
	items := jsonOf[[]api.AttentionItem](e, "attention")
	var approval *api.AttentionItem
	for i := range items {
		if items[i].Kind == api.AttentionApproval {
			approval = &items[i]
			break
		}
	}
	if approval == nil {
		t.Fatalf("attention lists no approval: %+v", items)
	}
	if approval.Workflow != "lines" || approval.ID == "" || !strings.HasPrefix(approval.Title, "Append ") {
		t.Errorf("approval = %+v", approval)
	}
	r := e.ok("attention")
	if !strings.Contains(r.stdout, "approval") || !strings.Contains(r.stdout, approval.ID) {
		t.Errorf("attention table: %s", r)
	}

	e.ok("approve", approval.ID)
	e.ok("drain")
	ms := jsonOf[[]api.MutationView](e, "mutations", "lines")
	var m *api.MutationView
	for i := range ms {
		if ms[i].ID == approval.ID {
			m = &ms[i]
		}
	}
	if m == nil || m.Status != "applied" {
		t.Fatalf("approved mutation %s: %+v", approval.ID, ms)
	}
	if got := e.read("out.txt"); !strings.Contains(got, strings.TrimPrefix(approval.Title, "Append ")+"\n") {
		t.Errorf("out.txt = %q after approving %q", got, approval.Title)
	}
	// answering twice is refused
	e.expect(3, "approve", approval.ID)
}

func TestDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := e.command(ctx, "--daemon")
	var dout, derr bytes.Buffer
	d.Stdout, d.Stderr = &dout, &derr
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			d.Process.Kill()
			kit.Wait(t, exited, kit.Timeout)
		}
	}()

	sock := daemon.SocketPath(e.db)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("daemon exited early: %v\nstdout: %s\nstderr: %s", err, dout.String(), derr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket at %s after 30s; stderr: %s", sock, derr.String())
		}
	}
	if fi, err := os.Stat(sock); err == nil && fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}

	// a second engine on the held database is refused
	r := e.expect(3, "drain")
	if !strings.Contains(r.stderr, "daemon") && !strings.Contains(r.stderr, "pid") {
		t.Errorf("drain beside a daemon should say why: %s", r)
	}

	// other commands act through the socket; the daemon runs the workflow
	wfs := jsonOf[[]api.WorkflowView](e, "workflows")
	if len(wfs) != 1 || wfs[0].Name != "lines" {
		t.Fatalf("workflows through the daemon = %+v", wfs)
	}
	for time.Now().Before(deadline) && e.read("out.txt") != "a.txt\nb.txt\n" {
		time.Sleep(50 * time.Millisecond)
	}
	if got := e.read("out.txt"); got != "a.txt\nb.txt\n" {
		t.Errorf("the daemon did not run the workflow: out.txt = %q", got)
	}
	// a broken file deployed through the daemon prints the same diagnostics
	r = e.expect(1, "deploy", e.file(e.dir, "broken.js", brokenWorkflow))
	if !diagLine.MatchString(r.stderr) {
		t.Errorf("deploy through the daemon: want file:line:col: message, got %s", r)
	}
	if r := e.ok("attention", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("attention through the daemon = %s", r.stdout)
	}
	e.expect(1, "status", "ghost")
	e.ok("pause", "lines")
	e.expect(3, "run-now", "lines")
	if got := jsonOf[api.WorkflowDetail](e, "status", "lines"); got.Status != "paused" {
		t.Errorf("status through the daemon = %+v", got)
	}

	if err := d.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v\nstderr: %s", err, derr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("daemon did not exit within 60s of SIGTERM")
	}
	if derr.Len() != 0 || dout.Len() != 0 {
		t.Errorf("the daemon wrote to the terminal: stdout %q stderr %q", dout.String(), derr.String())
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(e.db), "keep.log")); err != nil || fi.Size() == 0 {
		t.Errorf("no keep.log next to the database: %v", err)
	}
	// the database is free again
	e.ok("drain")
}

func TestConfig(t *testing.T) {
	t.Parallel()

	t.Run("an unknown subscription handler is an error naming it and the known ones", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.writeConfig("[[events.subscribes]]\ntopic = \"approval.requested\"\nhandler = \"page_me\"\n")
		r := e.expect(1, "workflows")
		if !strings.Contains(r.stderr, "page_me") || !strings.Contains(r.stderr, "notify_user") {
			t.Errorf("want the unknown handler and the known ones named: %s", r)
		}
	})

	t.Run("an unknown key is an error naming it", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		e.writeConfig("[policy]\nfrobnication_level = 3\n")
		r := e.expect(1, "workflows")
		if !strings.Contains(r.stderr, "frobnication_level") {
			t.Errorf("want the unknown key named: %s", r)
		}
		r = e.expect(1, "validate", e.file(e.dir, "lines.js", filesWorkflow))
		if !strings.Contains(r.stderr, "frobnication_level") {
			t.Errorf("validate: want the unknown key named: %s", r)
		}
	})

	t.Run("an explicit config must exist", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		r := e.raw("--db", e.db, "--config", filepath.Join(e.dir, "nope.toml"), "workflows")
		if r.code != 1 || !strings.Contains(r.stderr, "nope.toml") {
			t.Errorf("missing explicit config: %s", r)
		}
	})

	t.Run("KEEP_DB and the default config path apply without flags", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, keepBin, "workflows", "--json")
		cmd.Env = append(e.environ(), "KEEP_DB="+e.db)
		r := runCmd(t, cmd)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
			t.Fatalf("keep workflows with KEEP_DB: %s", r)
		}
		if _, err := os.Stat(e.db); err != nil {
			t.Errorf("KEEP_DB not used: %v", err)
		}
		// without KEEP_DB: $XDG_DATA_HOME/keep/keep.db
		r = e.raw("workflows")
		if r.code != 0 {
			t.Fatalf("keep workflows: %s", r)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "xdg-data", "keep", "keep.db")); err != nil {
			t.Errorf("default db path not used: %v", err)
		}
	})

	t.Run("init writes the defaults once, mode 0600", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		dir := filepath.Join(e.dir, "conf")
		r := e.raw("init", dir)
		if r.code != 0 {
			t.Fatalf("init: %s", r)
		}
		path := filepath.Join(dir, "config.toml")
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("config mode %v, want 0600", fi.Mode().Perm())
		}
		cfg, err := config.Load(path, true)
		if err != nil {
			t.Fatalf("the written config does not load: %v", err)
		}
		if cfg.Policy.DefaultMutationMode != "ask" || cfg.Policy.MinProducerInterval.Duration != time.Minute {
			t.Errorf("written config is not the defaults: %+v", cfg.Policy)
		}
		// the example workflows come with it, and each validates as written
		examples, _ := filepath.Glob(filepath.Join(dir, "workflows", "*.js"))
		if len(examples) < 5 {
			t.Fatalf("init wrote %d example workflows, want every embedded one", len(examples))
		}
		for _, ex := range examples {
			if r := e.raw("validate", ex); r.code != 0 {
				t.Errorf("example %s does not validate: %s", ex, r)
			}
		}
		if err := os.WriteFile(path, []byte("# mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// a second init keeps the config (and refreshes keep.d.ts:
		// TestInitAgainRefreshesOnlyWhatKeepGenerates)
		if r := e.raw("init", dir); r.code != 0 {
			t.Errorf("init over an existing config: %s", r)
		}
		if b, _ := os.ReadFile(path); string(b) != "# mine\n" {
			t.Errorf("init overwrote the config: %q", b)
		}
		// without DIR: the default config path
		if r := e.raw("init"); r.code != 0 {
			t.Fatalf("init: %s", r)
		}
		if _, err := config.Load(filepath.Join(e.dir, "xdg-config", "keep", "config.toml"), true); err != nil {
			t.Errorf("init without DIR: %v", err)
		}
	})
}
