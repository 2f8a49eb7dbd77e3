package clitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine/api"
)

// TestAnswersToWhatIsDoneAreRefused: an answer is accepted only while what
// it answers waits (DESIGN.md §7.0), and a refusal says what the thing is.
// skip-input of an input whose work was all done used to be accepted and
// rewrote its history: `keep inputs` showed an applied output under an
// input "skipped". skip of a consumed event said it was "reserved", and
// naming a pending event twice refused the whole answer, saying the
// pending event was "skipped".
func TestAnswersToWhatIsDoneAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	e.ok("drain")

	ins := jsonOf[[]api.InputView](e, "inputs", "lines")
	if len(ins) != 2 {
		t.Fatalf("inputs = %+v", ins)
	}
	done := ins[0]
	if done.Status != api.InputDone || len(done.Outputs) != 1 || done.Outputs[0].Status != "applied" {
		t.Fatalf("input %+v: want done with its applied output", done)
	}
	r := e.keep("skip-input", done.InputID)
	if r.code != 3 || !strings.Contains(r.stderr, "is done") {
		t.Errorf("skip-input of a done input: want it to say the input is done, got %s", r)
	}
	for _, in := range jsonOf[[]api.InputView](e, "inputs", "lines") {
		if in.Status != api.InputDone {
			t.Errorf("after a refused skip-input, input %s is %s, want done", in.InputID, in.Status)
		}
	}
	if c := jsonOf[api.WorkflowDetail](e, "status", "lines").Counts; c.InputsSkipped != 0 || c.InputsDone != 2 {
		t.Errorf("counts after a refused skip-input = %+v", c)
	}

	evs := jsonOf[[]api.EventView](e, "events", "lines")
	if evs[0].Status != "consumed" {
		t.Fatalf("events = %+v", evs)
	}
	r = e.keep("skip", evs[0].ID)
	if r.code != 3 || !strings.Contains(r.stderr, "is consumed") || strings.Contains(r.stderr, "reserved by") {
		t.Errorf("skip of a consumed event: want it called consumed, got %s", r)
	}

	// a pending event, named twice in one answer, is skipped once (a
	// topic nobody reads keeps its events pending)
	e.ok("deploy", e.file(e.dir, "unread.js", `export default Keep.workflow({ name: "unread", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "One" });
    await ctx.publish("t", { messageId: "m1", inputId, payload: {} });
  } } } });`))
	e.ok("drain")
	pend := jsonOf[[]api.EventView](e, "events", "unread")
	if len(pend) != 1 || pend[0].Status != "pending" {
		t.Fatalf("events of unread = %+v", pend)
	}
	if r := e.keep("skip", pend[0].ID, pend[0].ID); r.code != 0 {
		t.Errorf("skip of a pending event named twice: %s", r)
	}
	if got := jsonOf[[]api.EventView](e, "events", "unread"); got[0].Status != "skipped" {
		t.Errorf("event %s is %s after skip, want skipped", got[0].ID, got[0].Status)
	}
	r = e.expect(3, "skip", pend[0].ID)
	if !strings.Contains(r.stderr, "is skipped") {
		t.Errorf("skip of a skipped event: %s", r)
	}
}

// TestLogsShowOnlyTheWorkflowsOwnRuns: `keep logs WORKFLOW --run ID` used to
// print any run's trace whatever WORKFLOW said — another workflow's, or one
// of a workflow that does not exist — as if it were WORKFLOW's.
func TestLogsShowOnlyTheWorkflowsOwnRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	e.ok("deploy", e.file(e.dir, "other.js", strings.Replace(filesWorkflow, `name: "lines"`, `name: "other"`, 1)))
	e.ok("drain")

	var linesRun string
	for _, run := range jsonOf[[]api.RunView](e, "runs", "lines") {
		if run.HandlerType == "producer" {
			linesRun = run.ID
		}
	}
	if linesRun == "" {
		t.Fatal("lines has no producer run")
	}
	r := e.ok("logs", "lines", "--run", linesRun)
	if !strings.Contains(r.stdout, "found 2 files") || !strings.Contains(r.stdout, "scan (producer)") {
		t.Errorf("logs of lines' own run: %s", r)
	}
	r = e.expect(1, "logs", "other", "--run", linesRun)
	if !strings.Contains(r.stderr, "other has no run "+linesRun) || strings.Contains(r.stdout, "found") {
		t.Errorf("logs other --run of a run of lines: %s", r)
	}
	r = e.expect(1, "logs", "nope", "--run", linesRun)
	if !strings.Contains(r.stderr, `no workflow "nope"`) {
		t.Errorf("logs of a workflow that does not exist: %s", r)
	}
	e.expect(1, "logs", "lines", "--run", "999999")
}

// TestUsageMistakesShowTheCommandsUsage: a mistake in a command's own
// arguments is exit 2 with that command's usage line. A bad deploy --name
// was exit 3 (refused), and mistakes found inside a command (approve
// --wide without --always) printed keep's global usage line.
func TestUsageMistakesShowTheCommandsUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	wf := e.file(e.dir, "lines.js", filesWorkflow)
	for _, c := range []struct {
		args       []string
		says, used string
	}{
		{[]string{"deploy", wf, "--name", "Bad Name"}, "--name", "usage: keep deploy FILE"},
		{[]string{"approve", "1", "--wide"}, "--wide", "usage: keep approve ID"},
		{[]string{"approve", "p1", "--always"}, "--always", "usage: keep approve ID"},
	} {
		r := e.keep(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.says) || !strings.Contains(r.stderr, c.used) {
			t.Errorf("keep %s: want exit 2 naming %s with %q, got %s", strings.Join(c.args, " "), c.says, c.used, r)
		}
	}
	// an unknown command is a mistake about the list of commands
	if r := e.keep("help", "nope"); r.code != 2 || !strings.Contains(r.stderr, "run 'keep help' for the list of commands") {
		t.Errorf("keep help nope: %s", r)
	}
	if r := e.keep("workflows"); strings.Contains(r.stdout, "Bad Name") {
		t.Errorf("a refused --name was deployed: %s", r)
	}
}

// TestMutationsSayWhatWasAnswered: every answer is recorded with who gave
// it and when (DESIGN.md §7.1), and the ledger's history shows it. An
// approved call read "resolved by host", exactly as one a grant allowed,
// and a call sent again after "not-happened" likewise: the answers were
// written to the database and shown nowhere.
func TestMutationsSayWhatWasAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()
	e.ok("drain")
	first := attentionOf(e, api.AttentionApproval)
	if len(first) != 1 {
		t.Fatalf("approvals = %+v", first)
	}
	e.ok("approve", first[0].ID)
	e.ok("drain")
	second := attentionOf(e, api.AttentionApproval)
	if len(second) != 1 {
		t.Fatalf("approvals after the first = %+v", second)
	}
	e.ok("reject", second[0].ID)
	e.ok("drain")

	want := map[string]string{first[0].ID: "approve", second[0].ID: "reject"}
	ms := jsonOf[[]api.MutationView](e, "mutations", "lines")
	if len(ms) != 2 {
		t.Fatalf("mutations = %+v", ms)
	}
	for _, m := range ms {
		if len(m.Answers) != 1 || m.Answers[0].Answer != want[m.ID] || m.Answers[0].AnsweredBy != "user" || m.Answers[0].At.IsZero() {
			t.Errorf("mutation %s (%s): answers %+v, want one %q by user", m.ID, m.Status, m.Answers, want[m.ID])
		}
	}
	r := e.ok("mutations", "lines")
	for _, a := range []string{"approve (attempt 1) by user at ", "reject (attempt 1) by user at "} {
		if !strings.Contains(r.stdout, a) {
			t.Errorf("keep mutations does not say %q: %s", a, r)
		}
	}
	// a call no one answered has none, as an empty list
	e.ok("grant", "lines", "files.append", "--mode", "allow")
	e.file(e.root, "inbox/c.txt", "gamma")
	e.ok("run-now", "lines")
	e.ok("drain")
	if r := e.ok("mutations", "lines", "--json"); !strings.Contains(r.stdout, `"answers": []`) {
		t.Errorf("an unanswered call's answers are not []: %s", r.stdout)
	}
}

// TestDrainOutOfTimeNamesWhatRuns: `keep drain --timeout D` that runs out
// of time said only "still busy after D"; it names the workflows whose
// runs were still going, so the person knows where to look.
func TestDrainOutOfTimeNamesWhatRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.writeConfig(fmt.Sprintf("[policy]\nhandler_timeout = \"1m\"\n\n[connectors.files]\nroots = [%q]\n", e.root))
	e.deployLines()
	e.ok("drain") // lines has nothing left to do: only spin runs on
	e.ok("deploy", e.file(e.dir, "spin.js", `export default Keep.workflow({ name: "spin", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async () => { while (true) {} } } } });`))
	r := e.expect(1, "drain", "--timeout", "2s")
	if !strings.Contains(r.stderr, "still busy after 2s: still running: spin") || strings.Contains(r.stderr, "lines") {
		t.Errorf("drain out of time: want it to name spin alone, got %s", r)
	}
	// the run drain left behind is found at the next start (pause opens
	// an engine): its history says why it is "crashed"
	e.ok("pause", "spin")
	runs := jsonOf[[]api.RunView](e, "runs", "spin")
	if len(runs) == 0 || runs[0].Status != "crashed" || !strings.Contains(runs[0].Error, "keep stopped while this run was under way") {
		t.Errorf("the run drain left behind: %+v", runs)
	}
}

// TestResolveSaysWhenTheResendWaitsForAnEngine: with no engine running,
// `keep resolve ID not-happened` (and try-again) records the answer, and
// the resend (the check) is the scheduler's: it happens when an engine
// starts. The command said only "resolved 1: not-happened", as if the
// call had gone out — unlike approve, which sends at once, and run-now,
// which says so.
func TestResolveSaysWhenTheResendWaitsForAnEngine(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		posts++
		if posts == 1 {
			w.WriteHeader(502) // uncertain: it may have happened
		}
	}))
	defer srv.Close()
	e := newEnv(t, "allow")
	e.ok("deploy", e.file(e.dir, "post.js", strings.Replace(`export default Keep.workflow({ name: "post", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "http", type: "resource", id: "1", title: "Item 1" });
    await ctx.publish("t", { messageId: "1", inputId, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: URL }); },
    async next() {} }) } });`, "URL", `"`+srv.URL+`"`, 1)))
	e.ok("drain")
	rs := attentionOf(e, api.AttentionReconciliation)
	if len(rs) != 1 {
		t.Fatalf("reconciliation items = %+v", rs)
	}
	r := e.ok("resolve", rs[0].ID, "not-happened")
	if !strings.Contains(r.stderr, "no keep engine is running") || !strings.Contains(r.stderr, "the call is sent again when one starts") {
		t.Errorf("resolve not-happened with no engine does not say the resend waits for one: %s", r)
	}
	mu.Lock()
	before := posts
	mu.Unlock()
	e.ok("drain")
	mu.Lock()
	after := posts
	mu.Unlock()
	if before != 1 || after != 2 {
		t.Errorf("posts: %d after the answer, %d after drain; want 1, then the resend", before, after)
	}
	if ms := jsonOf[[]api.MutationView](e, "mutations", "post"); len(ms) != 1 || ms[0].Status != "applied" {
		t.Errorf("mutations = %+v", ms)
	}
}

// TestAnApprovalOfAPausedWorkflowAddsNoRunsPerCommand: approving a call of
// a paused workflow leaves its run to go on at resume. With no daemon,
// every later command (each opens an engine, which recovers) marked that
// run crashed and made an identical one: two runs more in `keep runs` for
// each `keep workflows`, without end. The call is made once, at resume.
func TestAnApprovalOfAPausedWorkflowAddsNoRunsPerCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()
	e.ok("drain")
	a := attentionOf(e, api.AttentionApproval)
	if len(a) != 1 {
		t.Fatalf("approvals = %+v", a)
	}
	e.ok("pause", "lines")
	e.ok("approve", a[0].ID)
	e.ok("workflows") // the first start after it recovers the run once
	before := len(jsonOf[[]api.RunView](e, "runs", "lines"))
	for range 3 {
		e.ok("workflows")
	}
	if after := len(jsonOf[[]api.RunView](e, "runs", "lines")); after != before {
		t.Errorf("runs of lines: %d, then %d after three `keep workflows`", before, after)
	}
	if got := e.read("out.txt"); got != "" {
		t.Fatalf("the approved call was made while the workflow was paused: out.txt = %q", got)
	}
	e.ok("resume", "lines")
	e.ok("drain")
	if got := e.read("out.txt"); got != "a.txt\n" && got != "b.txt\n" {
		t.Errorf("after resume, out.txt = %q, want the approved line once", got)
	}
	for _, m := range jsonOf[[]api.MutationView](e, "mutations", "lines") {
		if m.ID == a[0].ID && m.Status != "applied" {
			t.Errorf("the approved call is %s after resume", m.Status)
		}
	}
}

// TestARunParkedPastItsCallAddsNoRunsPerCommand: paused while its call is
// out, a run parks once the call is done, to run next at resume; stopped
// there, the daemon's successor retries it forward. With no daemon after
// that, every command crashed that retry and made another: two runs more
// per command, without end. next runs once, at resume; the call is sent
// once.
func TestARunParkedPastItsCallAddsNoRunsPerCommand(t *testing.T) {
	t.Parallel()
	got, release := make(chan struct{}, 8), make(chan struct{})
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		got <- struct{}{}
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	}))
	defer srv.Close()
	e := newEnv(t, "allow")
	d := startDaemon(t, e)
	awaitSocket(t, e, d, time.Minute)
	e.ok("deploy", e.file(e.dir, "post.js", strings.Replace(`export default Keep.workflow({ name: "post", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "http", type: "resource", id: "1", title: "Item 1" });
    await ctx.publish("t", { messageId: "1", inputId, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: URL }); },
    async next() {} }) } });`, "URL", `"`+srv.URL+`"`, 1)))
	select {
	case <-got:
	case <-time.After(time.Minute):
		t.Fatal("the call never came")
	}
	e.ok("pause", "post")
	close(release)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ms := jsonOf[[]api.MutationView](e, "mutations", "post")
		if len(ms) == 1 && ms[0].Status == "applied" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call was not applied: %+v", ms)
		}
	}
	d.stop(t)
	e.ok("workflows") // the first start after the stop retries the run forward, once
	before := len(jsonOf[[]api.RunView](e, "runs", "post"))
	for range 3 {
		e.ok("workflows")
	}
	if after := len(jsonOf[[]api.RunView](e, "runs", "post")); after != before {
		t.Errorf("runs of post: %d, then %d after three `keep workflows`", before, after)
	}
	e.ok("resume", "post")
	e.ok("drain")
	runs := jsonOf[[]api.RunView](e, "runs", "post")
	if runs[0].Status != "committed" {
		t.Errorf("after resume the newest run is %+v, want committed", runs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if posts != 1 {
		t.Errorf("the call was sent %d times", posts)
	}
}
