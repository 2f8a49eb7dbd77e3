package engine

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/engine/api"
)

// runRow reads the newest run of a handler type through a separate
// connection, as another process would see the file.
func runRow(dbPath, handlerType string) (status, phase string, err error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	err = db.QueryRow(`SELECT status, phase FROM runs WHERE handler_type = ? ORDER BY id DESC LIMIT 1`, handlerType).Scan(&status, &phase)
	return status, phase, err
}

// readingWorkflow: its producer and its consumer's prepare each read URL
// (/p and /c); the producer publishes one event.
func readingWorkflow(url string) string {
	return strings.ReplaceAll(`export default Keep.workflow({ name: "r", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    await ctx.http.get({ url: URL + "/p" });
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "One" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      await ctx.http.get({ url: URL + "/c" });
      const [e] = await ctx.peek("t");
      return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} };
    },
    async mutate() {}, async next() {} }) } });`, "URL", `"`+url+`"`)
}

func TestRunLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a run record exists from the moment a handler starts: active, preparing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		seen := make(chan string, 4)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			typ := map[string]string{"/p": "producer", "/c": "consumer"}[r.URL.Path]
			status, phase, err := runRow(b.dbPath, typ)
			if err != nil {
				seen <- typ + ": " + err.Error()
			} else {
				seen <- typ + ": " + status + " " + phase
			}
			w.Write([]byte(`{}`))
		}))
		defer srv.Close()
		b.deploy("r", readingWorkflow(srv.URL))
		b.drain()
		got := map[string]bool{}
		for len(seen) > 0 {
			got[<-seen] = true
		}
		for _, want := range []string{"producer: active preparing", "consumer: active preparing"} {
			if !got[want] {
				t.Errorf("during the handler's read the newest run was %v, want %q", got, want)
			}
		}
	})

	t.Run("a stop during prepare leaves a run that recovery marks crashed, and the consumer runs again", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		entered := make(chan struct{}, 1)
		var block atomic.Bool
		block.Store(true)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/c" && block.Load() {
				entered <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			w.Write([]byte(`{}`))
		}))
		defer srv.Close()
		b.deploy("r", readingWorkflow(srv.URL))
		dctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.e.Drain(dctx) }()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the consumer's prepare never ran")
		}
		cancel() // the process goes away in the middle of prepare
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("drain did not return after its context ended")
		}
		block.Store(false)
		if status, phase, err := runRow(b.dbPath, "consumer"); err != nil || status != "active" || phase != "preparing" {
			t.Fatalf("after a stop in prepare the consumer's run is %q %q (%v), want active preparing", status, phase, err)
		}
		b.reopen()
		b.drain()
		var crashed, committed int
		for _, r := range b.runs("r") {
			if r.HandlerType != "consumer" {
				continue
			}
			switch {
			case r.Status == "crashed" && r.Phase == "preparing":
				crashed++
			case r.Status == "committed":
				committed++
			case r.Status == "active":
				t.Errorf("run %s is still active", r.ID)
			}
		}
		if crashed != 1 || committed == 0 {
			t.Fatalf("runs %+v: want one crashed in preparing and the consumer committed after it", b.runs("r"))
		}
		if ev := b.events("r", "t")[0]; ev.Status != "consumed" {
			t.Fatalf("event %s, want consumed by the retry", ev.Status)
		}
	})

	t.Run("a mutate that throws before any mutation leaves the run in phase mutating", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("w", strings.Replace(tickWorkflow("w", `const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} };`),
			`async mutate(ctx, prepared) {}`, `async mutate(ctx, prepared) { throw new Error("broken before the call"); }`, 1))
		b.drain()
		var failed []api.RunView
		for _, r := range b.runs("w") {
			if r.Status == "failed:logic" {
				failed = append(failed, r)
			}
		}
		if len(failed) != 1 || failed[0].Phase != "mutating" {
			t.Fatalf("runs %+v: want one failed:logic run in phase mutating", b.runs("w"))
		}
	})

	t.Run("on engine start every consumer prepares once, so a wakeAt is scheduled without any event", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("wake", `export default Keep.workflow({ name: "wake", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { return { reservations: [], data: {}, wakeAt: new Date(Date.parse("2026-11-02T09:00:00Z") + 1000).toISOString() }; },
    async mutate() {}, async next() {} }) } });`)
		// keep deploy is one process; the engine that runs it is the next
		b.reopen()
		start := b.clock.Now()
		b.drain()
		if n := len(b.runs("wake")); n != 1 {
			t.Fatalf("runs = %d: a consumer with no events prepares once on start", n)
		}
		if w := b.handler("wake", "c").WakeAt; w == nil || !w.Equal(start.Add(30*time.Second)) {
			t.Fatalf("wakeAt %v, want clamped up to now+30s", w)
		}
		// and the drain ends: an empty prepare with a future wakeAt is no work now
		b.drain()
		if n := len(b.runs("wake")); n != 1 {
			t.Fatalf("runs = %d after a second drain, want still 1", n)
		}
	})
}

// TestTraceBounded: a run's trace keeps at most traceMaxEntries entries and
// traceMaxBytes bytes, and says what it cut.
func TestTraceBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("inbox/a.txt", "a")
	b.deploy("chatty", `export default Keep.workflow({ name: "chatty", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      for (let i = 0; i < 1500; i++) await ctx.files.list({ dir: "inbox" });
      return { reservations: [], data: {} };
    },
    async mutate() {}, async next() {} }) } });`)
	b.drain()
	runs := b.runs("chatty")
	if len(runs) != 1 || runs[0].Status != "committed" {
		t.Fatalf("runs %+v, want one committed", runs)
	}
	tr, err := b.e.Trace(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	const maxEntries, maxBytes = 1000, 256 << 10
	calls, bytes, cut := 0, 0, ""
	for _, l := range tr {
		bytes += len(l.Args) + len(l.Result) + len(l.Error)
		if l.Kind == "call" {
			calls++
		}
		if strings.Contains(l.Result, "the trace was cut") {
			cut = l.Result
		}
	}
	if calls > maxEntries || bytes > maxBytes+4096 {
		t.Fatalf("the trace kept %d calls, %d bytes; a run keeps at most %d entries, %d bytes", calls, bytes, maxEntries, maxBytes)
	}
	if !strings.Contains(cut, "500 more entries") {
		t.Fatalf("no note says what was cut (%q); %d entries kept", cut, len(tr))
	}
}

// TestRetryLeavesNothingActive: keep retry without a daemon ends the run it
// starts in the same engine, so the next start finds nothing to crash.
func TestRetryLeavesNothingActive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	b.deploy("push", strings.Replace(pushWorkflow(s.URL, "a"),
		`async next(ctx, p, r) {`, `async next(ctx, p, r) { if (r.status === "applied") throw new Error("next is broken");`, 1))
	b.drain()
	if w := b.workflow("push"); w.Block == nil || w.Block.Kind != "repair" {
		t.Fatalf("block %+v, want the logic failure in next", w.Block)
	}
	// the call's outcome was written before next ran: nothing is left in
	// flight to check
	if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != "applied" {
		t.Fatalf("mutations %+v, want the one call applied", ms)
	}
	if err := b.e.Retry(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.runs("push") {
		if r.Status == "active" {
			t.Fatalf("after keep retry run %s (%s) is still active", r.ID, r.Phase)
		}
	}
	retried := b.runs("push")[0]
	if retried.RetryOf == "" || retried.Phase != "emitting" || retried.Status != "failed:logic" {
		t.Fatalf("newest run %+v, want the retry at emitting, failed again", retried)
	}
	b.reopen() // a later keep drain
	b.drain()
	for _, r := range b.runs("push") {
		if r.Status == "crashed" {
			t.Fatalf("run %s was found active and marked crashed after keep retry", r.ID)
		}
	}
	if s.Posts() != 1 {
		t.Fatalf("posts = %d, want 1", s.Posts())
	}
}
