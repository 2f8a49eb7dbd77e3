package engine

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

func (b *bundle) handler(wf, name string) api.HandlerView {
	b.t.Helper()
	for _, h := range b.workflow(wf).Handlers {
		if h.Name == name {
			return h
		}
	}
	b.t.Fatalf("no handler %s", name)
	return api.HandlerView{}
}

func TestScheduler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a cron producer runs on deploy, then at its times; missed times collapse into one run", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("cron", `export default Keep.workflow({ name: "cron", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { cron: "0 9 * * *" }, handler: async (ctx, state) => ({ n: (state?.n ?? 0) + 1 }) } },
  consumers: {} });`)
		b.drain()
		next := b.handler("cron", "p").NextRunAt
		if want := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC); next == nil || !next.Equal(want) {
			t.Fatalf("next run %v, want %v", next, want)
		}
		b.clock.Advance(4*24*time.Hour + time.Hour) // four 09:00s missed
		b.drain()
		if n := len(b.runs("cron")); n != 2 {
			t.Fatalf("runs = %d, want 2: missed schedules collapse into one run", n)
		}
		if next := b.handler("cron", "p").NextRunAt; !next.Equal(time.Date(2026, 11, 7, 9, 0, 0, 0, time.UTC)) {
			t.Fatalf("next run %v after catching up", next)
		}
	})

	t.Run("wakeAt is clamped to policy, ignored when unparsable, and cleared when a later prepare omits it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("wake", `export default Keep.workflow({ name: "wake", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx, state) {
      const n = state?.n ?? 0;
      const now = Date.parse(state?.now ?? "2026-11-02T09:00:00Z");
      const wake = [new Date(now + 1000).toISOString(), new Date(now + 72 * 3600e3).toISOString(), "tomorrow-ish", undefined][n];
      return { reservations: [], data: { n }, wakeAt: wake };
    },
    async mutate() {},
    async next(ctx, prepared) { return { n: prepared.data.n + 1 }; } }) } });`)
		start := b.clock.Now()
		b.drain()
		if w := b.handler("wake", "c").WakeAt; w == nil || !w.Equal(start.Add(30*time.Second)) {
			t.Fatalf("wakeAt %v, want clamped up to now+30s", w)
		}
		b.clock.Advance(30 * time.Second)
		b.drain()
		if w := b.handler("wake", "c").WakeAt; w == nil || !w.Equal(b.clock.Now().Add(24*time.Hour)) {
			t.Fatalf("wakeAt %v, want clamped down to now+24h", w)
		}
		b.clock.Advance(24 * time.Hour)
		b.drain()
		if w := b.handler("wake", "c").WakeAt; w != nil {
			t.Fatalf("an unparsable wakeAt left %v", w)
		}
		runs := b.runs("wake")
		tr, _ := b.e.Trace(ctx, runs[0].ID)
		var warned bool
		for _, l := range tr {
			warned = warned || strings.Contains(l.Result, "not an ISO 8601 time")
		}
		if !warned {
			t.Fatalf("trace %+v has no warning about the unparsable wakeAt", tr)
		}
		if n := len(runs); n != 3 {
			t.Fatalf("runs = %d, want 3 (no busy loop on empty reservations)", n)
		}
		// a restart does not bring a stale wake back (trap 11)
		b.reopen()
		b.clock.Advance(48 * time.Hour)
		b.drain()
		if next, _ := b.e.NextDue(ctx); next != nil {
			t.Fatalf("something is still due at %v", next)
		}
	})

	t.Run("consumers run before producers, the oldest pending event first", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("prio", `export default Keep.workflow({ name: "prio", topics: { a: {}, b: {} },
  producers: { p: { publishes: ["a", "b"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x", title: "Tick x" });
    await ctx.publish("b", { messageId: "older", inputId: id, payload: {} });
    await ctx.publish("a", { messageId: "newer", inputId: id, payload: {} });
  } } },
  consumers: {
    ca: Keep.consumer({ subscribe: ["a"], async prepare(ctx) { const [e] = await ctx.peek("a");
      return e ? { reservations: [{ topic: "a", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
      async mutate() {}, async next() {} }),
    cb: Keep.consumer({ subscribe: ["b"], async prepare(ctx) { const [e] = await ctx.peek("b");
      return e ? { reservations: [{ topic: "b", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
      async mutate() {}, async next() {} }),
  } });`)
		b.drain()
		runs := b.runs("prio")
		var order []string
		for i := len(runs) - 1; i >= 0; i-- {
			order = append(order, runs[i].Handler)
		}
		// deploy: both consumers dirty (nothing pending), then the producer;
		// then cb (oldest pending event) before ca
		got := strings.Join(order, " ")
		if !strings.HasPrefix(got, "ca cb p cb ca") && !strings.HasPrefix(got, "cb ca p cb ca") {
			t.Fatalf("run order %q, want consumers first, then the producer, then cb before ca", got)
		}
	})

	t.Run("transient back-off is persisted: a restart does not reset the count, and the limit blocks", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("down", `export default Keep.workflow({ name: "down", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    await ctx.http.get({ url: "http://127.0.0.1:1/feed" });
  } } }, consumers: {} });`)
		b.drain()
		w := b.workflow("down")
		if w.Block == nil || w.Block.Kind != "transient" {
			t.Fatalf("block %+v, want a transient back-off", w.Block)
		}
		for i := 2; i <= 6; i++ {
			b.reopen()
			next, _ := b.e.NextDue(ctx)
			if next == nil {
				t.Fatalf("attempt %d: nothing due", i)
			}
			b.clock.Advance(next.Sub(b.clock.Now()))
			b.drain()
		}
		w = b.workflow("down")
		if w.Block == nil || !strings.Contains(w.Block.Reason, "gave up after 6 attempts") || w.State != api.StateNeedsAttention {
			t.Fatalf("after the limit: block %+v state %s", w.Block, w.State)
		}
		if next, _ := b.e.NextDue(ctx); next != nil {
			t.Fatalf("a blocked workflow still has %v due", next)
		}
		if err := b.e.Retry(ctx, "down"); err != nil {
			t.Fatal(err)
		}
		if w := b.workflow("down"); w.Block != nil {
			t.Fatalf("retry left block %+v", w.Block)
		}
	})

	t.Run("a paused workflow runs nothing, and pausing is never a failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain() // an approval waits
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		att, _ := b.e.Attention(ctx)
		if err := b.e.Approve(ctx, att[0].ID, false); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if s.Posts() != 0 {
			t.Fatal("a paused workflow performed its mutation")
		}
		if w := b.workflow("push"); w.State != api.StatePaused {
			t.Fatalf("state %s", w.State)
		}
		if err := b.e.RunNow(ctx, "push"); err == nil {
			t.Fatal("run now was accepted on a paused workflow")
		}
		if err := b.e.Resume(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if s.Posts() != 1 {
			t.Fatalf("posts = %d after resume, want 1", s.Posts())
		}
		for _, r := range b.runs("push") {
			if strings.HasPrefix(string(r.Status), "failed") {
				t.Fatalf("pause produced a failed run: %+v", r)
			}
		}
	})
}

func TestPauseAtCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a pause during prepare parks the run at prepared; nothing is sent until resume", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		ping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := b.e.Pause(ctx, "push"); err != nil {
				t.Error(err)
			}
		}))
		defer ping.Close()
		src := strings.Replace(pushWorkflow(s.URL, "a"), `const [e] = await ctx.peek("item", { limit: 1 });`,
			`const [e] = await ctx.peek("item", { limit: 1 }); if (e) await ctx.http.get({ url: "`+ping.URL+`" });`, 1)
		b.deploy("push", src)
		b.drain()
		if s.Posts() != 0 {
			t.Fatal("the mutation was sent after the pause")
		}
		runs := b.runs("push")
		if runs[0].Phase != "prepared" || runs[0].Status != "active" {
			t.Fatalf("newest run %+v, want parked active at prepared", runs[0])
		}
		ping.Config.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		if err := b.e.Resume(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if s.Posts() != 1 || b.inputs("push")[0].Status != api.InputDone {
			t.Fatalf("after resume: posts %d, input %+v", s.Posts(), b.inputs("push")[0])
		}
	})

	t.Run("a pause during the call never interrupts it; the run parks at mutated", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.OnPost(func(*http.Request) {
			if err := b.e.Pause(ctx, "push"); err != nil {
				t.Error(err)
			}
		})
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if ms := b.mutationsBy("applied"); len(ms) != 1 {
			t.Fatalf("mutations %+v, want the call completed and applied", b.mutationsBy(""))
		}
		runs := b.runs("push")
		if runs[0].Phase != "mutated" || runs[0].Status != "active" {
			t.Fatalf("newest run %+v, want parked active at mutated", runs[0])
		}
		if ev := b.events("push", "item")[0]; ev.Status != "pending" || ev.ReservedBy == "" {
			t.Fatalf("event %+v, want still reserved until next commits", ev)
		}
		s.OnPost(nil)
		if err := b.e.Resume(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if ev := b.events("push", "item")[0]; ev.Status != "consumed" || s.Posts() != 1 {
			t.Fatalf("after resume: event %s, posts %d", ev.Status, s.Posts())
		}
	})
}

// TestConsumerStateRunAfterRun: the scheduler reads the picked consumer's
// state with the rest of its step and hands it to prepare. Each prepare must
// get what the same consumer's previous run committed — not an older state,
// nor another handler's — run after run within one drain.
func TestConsumerStateRunAfterRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	consumer := func(topic string) string {
		return strings.ReplaceAll(`Keep.consumer({ subscribe: ["T"],
      async prepare(ctx, state) { const [e] = await ctx.peek("T");
        return { reservations: e ? [{ topic: "T", ids: [e.messageId] }] : [], data: { n: state?.n ?? 0, log: state?.log ?? [] } }; },
      async mutate() {},
      async next(ctx, prepared) { const d = prepared.data; return { n: d.n + 1, log: [...d.log, "T" + d.n] }; } })`, "T", topic)
	}
	b.deploy("st", `export default Keep.workflow({ name: "st", topics: { a: {}, b: {} },
  producers: { p: { publishes: ["a", "b"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x", title: "Tick x" });
    for (let i = 0; i < 4; i++) {
      await ctx.publish("a", { messageId: "a" + i, inputId: id, payload: {} });
      await ctx.publish("b", { messageId: "b" + i, inputId: id, payload: {} });
    }
  } } },
  consumers: { ca: `+consumer("a")+`, cb: `+consumer("b")+` } });`)
	b.drain()
	for _, h := range []string{"ca", "cb"} {
		runs := 0
		for _, r := range b.runs("st") {
			if r.Handler == h {
				if r.Status != "committed" {
					t.Fatalf("run %+v did not commit", r)
				}
				runs++
			}
		}
		if runs < 5 {
			t.Fatalf("%s ran %d times, want at least 5 (4 events)", h, runs)
		}
		var log []string
		for i := 0; i < runs; i++ {
			log = append(log, fmt.Sprintf("%q", h[1:]+strconv.Itoa(i)))
		}
		want := fmt.Sprintf(`{"n":%d,"log":[%s]}`, runs, strings.Join(log, ","))
		st, err := b.db.Read().HandlerState(ctx, 1, h)
		if err != nil {
			t.Fatal(err)
		}
		if string(st) != want {
			t.Errorf("%s's state after %d runs is %s, want %s", h, runs, st, want)
		}
	}
}

// TestStepReadFails: a read of the scheduler's step that fails is the step's
// error, and blocks the workflow as internal. A script that no longer loads
// is read, inside the step's read transaction, on every step: with more
// workflows stepping at once than the read pool holds connections, that read
// must go through the transaction's own connection, not wait for another.
func TestStepReadFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	const n = 8
	for i := 0; i < n; i++ {
		name := "w" + strconv.Itoa(i)
		b.deploy(name, tickWorkflow(name, `return { reservations: [], data: {} };`))
	}
	b.drain()
	raw, err := sql.Open("sqlite", "file:"+b.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`UPDATE script_versions SET source = 'export default 1 +'`)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	b.reopen() // the scripts are not cached: each step reads its source
	err = b.e.Drain(ctx)
	if err == nil || !strings.Contains(err.Error(), "no longer loads") {
		t.Fatalf("drain: %v, want each workflow's step to fail on its script", err)
	}
	wfs, err := b.db.Read().Workflows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wfs {
		if w.BlockKind != BlockInternal || !strings.Contains(w.BlockReason, "no longer loads") {
			t.Errorf("workflow %s: block %q %q, want internal: its script no longer loads", w.Name, w.BlockKind, w.BlockReason)
		}
	}
	if len(wfs) != n {
		t.Errorf("%d workflows, want %d", len(wfs), n)
	}
}
