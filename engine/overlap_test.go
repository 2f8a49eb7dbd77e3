package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/files"
	"keep/engine/api"
	"keep/sandbox"
)

// logWorkflow logs one line per phase; PREPARE_EXTRA runs in prepare after
// the peek.
const logWorkflow = `
export default Keep.workflow({
  name: "logs",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "files", type: "file", id: "1", title: "One" });
    await ctx.publish("item", { messageId: "1", inputId, payload: { n: 1 } });
  } } },
  consumers: { c: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      PREPARE_EXTRA
      console.log("in prepare");
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { n: e.payload.n } };
    },
    async mutate(ctx, p) {
      console.log("in mutate");
      await ctx.files.append({ path: "out.txt", content: p.data.n + "\n" });
    },
    async next() { console.log("in next"); },
  }) },
});`

// logLines are the log lines of a run's trace, in order.
func (b *bundle) logLines(runID string) []string {
	b.t.Helper()
	tr, err := b.e.Trace(context.Background(), runID)
	if err != nil {
		b.t.Fatal(err)
	}
	var lines []string
	for _, l := range tr {
		if l.Kind == "log" {
			lines = append(lines, l.Phase+": "+l.Result)
		}
	}
	return lines
}

// everyPhaseLogs is logWorkflow's trace of a run through every phase.
const everyPhaseLogs = "prepare: in prepare|mutate: in mutate|next: in next"

// wantLogs checks a run's log lines, joined by "|".
func (b *bundle) wantLogs(runID, want string) {
	b.t.Helper()
	if got := strings.Join(b.logLines(runID), "|"); got != want {
		b.t.Errorf("run %s logs %q, want %q", runID, got, want)
	}
}

// preparedRun is the workflow's one consumer run that got past prepare's
// peek (the others found nothing and log nothing in prepare).
func (b *bundle) preparedRun(wf string) api.RunView {
	b.t.Helper()
	var found []api.RunView
	for _, r := range b.runs(wf) {
		if r.HandlerType == "consumer" && slices.Contains(b.logLines(r.ID), "prepare: in prepare") {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		b.t.Fatalf("runs past the peek %+v, want one", found)
	}
	return found[0]
}

// Mutate runs while the prepared checkpoint commits (overlap.go); its log
// lines still land in the run's trace once, after prepare's.
func TestEarlyMutateTrace(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	b.deploy("logs", strings.Replace(logWorkflow, "PREPARE_EXTRA", "", 1))
	b.drain()
	if got := b.read("out.txt"); got != "1\n" {
		t.Fatalf("out.txt = %q", got)
	}
	run := b.preparedRun("logs")
	b.wantLogs(run.ID, everyPhaseLogs)
}

// A run parked at prepared drops the mutate phase started early: nothing of
// it is recorded, and mutate runs again, once, when the run goes on.
func TestEarlyMutateDroppedWhenParked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	ping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := b.e.Pause(ctx, "logs"); err != nil {
			t.Error(err)
		}
	}))
	defer ping.Close()
	b.deploy("logs", strings.Replace(logWorkflow, "PREPARE_EXTRA", `await ctx.http.get({ url: "`+ping.URL+`" });`, 1))
	b.drain()
	run := b.preparedRun("logs")
	if run.Phase != "prepared" || run.Status != "active" {
		t.Fatalf("run %+v, want parked active at prepared", run)
	}
	b.wantLogs(run.ID, "prepare: in prepare") // nothing of the mutate started early
	if got := b.read("out.txt"); got != "" {
		t.Fatalf("out.txt = %q before resume", got)
	}
	ping.Config.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if err := b.e.Resume(ctx, "logs"); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := b.read("out.txt"); got != "1\n" {
		t.Fatalf("out.txt = %q after resume", got)
	}
	b.wantLogs(run.ID, everyPhaseLogs)
}

// A run parked at mutated drops the next phase started while the outcome
// committed: nothing of it is recorded, and next runs again, once, on resume.
func TestEarlyNextDroppedWhenParked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	s.OnPost(func(*http.Request) {
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Error(err)
		}
	})
	src := strings.Replace(pushWorkflow(s.URL, "a"), `async next(ctx, p, r) {`, `async next(ctx, p, r) { console.log("in next");`, 1)
	b.deploy("push", src)
	b.drain()
	run := b.runs("push")[0]
	if run.Phase != "mutated" || run.Status != "active" {
		t.Fatalf("newest run %+v, want parked active at mutated", run)
	}
	if lines := b.logLines(run.ID); slices.Contains(lines, "next: in next") {
		t.Fatalf("parked run's trace logs %q: next's line recorded before next ran", lines)
	}
	s.OnPost(nil)
	if err := b.e.Resume(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	b.drain()
	b.wantLogs(run.ID, "next: in next") // mutate stops at its call: its line after it never runs
	if s.Posts() != 1 {
		t.Errorf("posts = %d, want 1", s.Posts())
	}
}

// syncWatch is the files connector, watching what the host does with the
// sync an append hands over: whether the run it belongs to goes on to next
// and commits while that sync is still under way, and what the sync
// returns (fail, when set).
type syncWatch struct {
	*files.Connector
	e       *Engine
	fail    error
	started chan bool // per append: whether the run committed during the sync
}

func (w *syncWatch) Do(ctx context.Context, call connectors.Call) (any, error) {
	if call.Method != "append" || call.SyncLater == nil {
		return w.Connector.Do(ctx, call)
	}
	committed := func() int {
		n := 0
		runs, _ := w.e.Runs(context.Background(), "logs", api.Page{Limit: 100})
		for _, r := range runs {
			if r.HandlerType == "consumer" && r.Status == RunCommitted {
				n++
			}
		}
		return n
	}
	before := committed()
	host := call.SyncLater
	call.SyncLater = func(sync func() error) {
		host(func() error {
			// a run that waited for this sync would never commit: wait a while
			deadline := time.Now().Add(10 * time.Second)
			for committed() == before && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			w.started <- committed() > before
			if err := sync(); err != nil {
				return err
			}
			return w.fail
		})
	}
	return w.Connector.Do(ctx, call)
}

// newSyncWatch is an engine on b whose files connector is watched.
func newSyncWatch(t *testing.T, b *bundle, fail error) *syncWatch {
	t.Helper()
	fc, err := files.New(files.Config{Roots: []string{b.root}})
	if err != nil {
		t.Fatal(err)
	}
	watch := &syncWatch{Connector: fc, fail: fail, started: make(chan bool, 8)}
	reg := connectors.NewRegistry()
	reg.Register(watch)
	e, err := New(context.Background(), Opts{DB: b.db, Connectors: reg, Policy: PolicyFrom(b.cfg.Policy), Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	watch.e = e
	b.e = e
	return watch
}

// Next starts once the call has taken effect, while its effect is synced
// to the disk (the sync an append hands over) and the outcome commits, and
// the run commits what it published with the call's result.
func TestEarlyNextDuringTheCallsSync(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	watch := newSyncWatch(t, b, nil)
	b.deploy("logs", strings.Replace(logWorkflow, "PREPARE_EXTRA", "", 1))
	b.drain()
	select {
	case started := <-watch.started:
		if !started {
			t.Fatal("the run of the append did not commit while the append's sync was under way: it waited for the sync")
		}
	default:
		t.Fatal("the append never handed its sync to the host")
	}
	if got := b.read("out.txt"); got != "1\n" {
		t.Fatalf("out.txt = %q", got)
	}
	run := b.preparedRun("logs")
	if run.Status != "committed" {
		t.Fatalf("run %+v, want committed", run)
	}
	b.wantLogs(run.ID, everyPhaseLogs)
}

// TestAnAppendsSyncIsAwaitedByTheLedger: the sync an append hands over is
// the ledger's to wait for: the engine does not call the work done until
// it has run, and when it fails the engine says so and never takes the
// ledger as on disk.
func TestAnAppendsSyncIsAwaitedByTheLedger(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	newSyncWatch(t, b, errors.New("out.txt: sync: input/output error"))
	b.deploy("logs", strings.Replace(logWorkflow, "PREPARE_EXTRA", "", 1))
	err := b.e.Drain(context.Background())
	if err == nil || !strings.Contains(err.Error(), "out.txt: sync: input/output error") {
		t.Fatalf("drain after a failed sync of the append: %v, want the sync's error", err)
	}
	if !b.db.Unsynced() {
		t.Fatal("the ledger is taken as on disk after the append's sync failed")
	}
}

// A consumer's mutate runs in its prepare's worker, in the same job
// (sandbox.RunThen): a run through every phase is two conversations with
// workers, not three. Not parallel: it counts every job of the process.
func TestMutateInPreparesJob(t *testing.T) {
	b := setup(t, allowMutations)
	b.deploy("logs", strings.Replace(logWorkflow, "PREPARE_EXTRA", "", 1))
	before := sandbox.Jobs()
	b.drain()
	// the consumer finding nothing yet (prepare, next); the producer; the
	// consumer's run of the item (prepare with its mutate, next); the
	// consumer finding nothing again (prepare, next): 8 with mutate apart
	if n := sandbox.Jobs() - before; n != 7 {
		t.Errorf("the drain took %d jobs, want 7", n)
	}
	if got := b.read("out.txt"); got != "1\n" {
		t.Fatalf("out.txt = %q", got)
	}
	b.wantLogs(b.preparedRun("logs").ID, everyPhaseLogs)
}
