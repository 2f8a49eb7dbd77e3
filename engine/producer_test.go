package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

func TestProducer(t *testing.T) {
	t.Parallel()

	t.Run("a producer that throws halfway leaves no trace but its run", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("half", `export default Keep.workflow({
  name: "half", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx, state) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x", title: "Tick x" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
    throw new Error("boom halfway");
  } } },
  consumers: {},
});`)
		b.drain()
		if n := len(b.inputs("half")); n != 0 {
			t.Errorf("inputs = %d, want 0", n)
		}
		if n := len(b.events("half", "")); n != 0 {
			t.Errorf("events = %d, want 0", n)
		}
		runs := b.runs("half")
		if len(runs) != 1 || runs[0].Status != "failed:logic" || !strings.Contains(runs[0].Error, "boom halfway") {
			t.Fatalf("runs = %+v", runs)
		}
		d := b.workflow("half")
		if d.Handlers[0].NextRunAt == nil || d.Handlers[0].NextRunAt.After(b.clock.Now()) {
			t.Errorf("a failed producer advanced its schedule to %v", d.Handlers[0].NextRunAt)
		}
		if d.State != api.StateNeedsAttention || d.Block == nil || d.Block.Kind != "repair" {
			t.Errorf("workflow state %s block %+v, want needs_attention/repair", d.State, d.Block)
		}
	})

	t.Run("registerInput is idempotent and publish is last-write-wins keeping status", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		src := `export default Keep.workflow({
  name: "lww", topics: { t: {}, u: {} },
  producers: { p: { publishes: ["t", "u"], schedule: { interval: "5m" }, handler: async (ctx, state) => {
    const n = (state?.n ?? 0) + 1;
    const a = ctx.registerInput({ source: "system", type: "schedule", id: "same", title: "Tick " + n });
    const again = ctx.registerInput({ source: "system", type: "schedule", id: "same", title: "Tick " + n });
    if (a !== again) throw new Error("not idempotent: " + a + " vs " + again);
    await ctx.publish(["t", "u"], { messageId: "m", inputId: a, payload: { n } });
    return { n };
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate() {}, async next() {} }) },
});`
		b.deploy("lww", src)
		b.drain()
		b.clock.Advance(5 * time.Minute)
		b.drain()
		if n := len(b.inputs("lww")); n != 1 {
			t.Fatalf("inputs = %d, want 1 (same source+type+id)", n)
		}
		evs := b.events("lww", "t")
		if len(evs) != 1 {
			t.Fatalf("events in t = %d, want 1", len(evs))
		}
		var p struct{ N int }
		_ = json.Unmarshal(evs[0].Payload, &p)
		if p.N != 2 || evs[0].Status != "consumed" {
			t.Fatalf("event = %s status %s, want payload n=2 (last write) and status consumed (kept)", evs[0].Payload, evs[0].Status)
		}
		if u := b.events("lww", "u"); len(u) != 1 || u[0].Status != "pending" || len(u[0].CausedBy) != 1 {
			t.Fatalf("fan-out event in u = %+v", u)
		}
	})

	// An inputId names its input in every run: one kept in the handler's
	// state is the one registerInput gives again, and publishes under it
	// need no registering in the run; so does the number registerInput
	// returned before inputIds were names.
	t.Run("an inputId from an earlier run names the same input", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		src := func(body string) string {
			return `export default Keep.workflow({
  name: "kept", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx, state) => {` + body + `} } },
  consumers: {},
});`
		}
		b.deploy("kept", src(`
    if (!state) return { id: ctx.registerInput({ source: "files", type: "file", id: "a:b.txt", title: "A" }) };
    await ctx.publish("t", { messageId: "m1", inputId: state.id, payload: {} });
    const again = ctx.registerInput({ source: "files", type: "file", id: "a:b.txt", title: "A" });
    if (again !== state.id) throw new Error("registered again as " + again + ", was " + state.id);
    return state;`))
		b.drain()
		b.clock.Advance(5 * time.Minute)
		b.drain()
		ins := b.inputs("kept")
		if len(ins) != 1 || ins[0].ExternalID != "a:b.txt" {
			t.Fatalf("inputs = %+v, want the one file", ins)
		}
		evs := b.events("kept", "t")
		if len(evs) != 1 || len(evs[0].CausedBy) != 1 {
			t.Fatalf("events = %+v, want m1 caused by the input", evs)
		}
		if runs := b.runs("kept"); len(runs) != 2 || runs[0].Status != "committed" {
			t.Fatalf("runs = %+v", runs)
		}
		b.deploy("kept", src(`
    await ctx.publish("t", { messageId: "m2", inputId: "`+ins[0].InputID+`", payload: {} });
    return state;`))
		b.clock.Advance(5 * time.Minute)
		b.drain()
		if evs := b.events("kept", "t"); len(evs) != 2 {
			t.Fatalf("events = %+v, want m2 published under the input's number", evs)
		}
	})

	t.Run("publish without inputId, to an undeclared topic, or with an unknown source is a logic error", func(t *testing.T) {
		t.Parallel()
		// the names are computed: written literally, validation refuses
		// them at deploy (sandbox TestValidateCalls); this is the run's guard
		cases := map[string]struct{ body, want string }{
			"no inputId":         {`await ctx.publish("t", { messageId: "m", payload: {} });`, "inputId"},
			"undeclared topic":   {`const id = ctx.registerInput({ source: "system", type: "schedule", id: "1", title: "T" }); await ctx.publish(["other"][0], { messageId: "m", inputId: id });`, `"other"`},
			"unknown source":     {`ctx.registerInput({ source: ["fax"][0], type: "page", id: "1", title: "T" });`, "valid sources"},
			"unknown type":       {`ctx.registerInput({ source: "files", type: ["dir"][0], id: "1", title: "T" });`, "valid types: file"},
			"foreign input id":   {`await ctx.publish("t", { messageId: "m", inputId: "999", payload: {} });`, "not an input registered"},
			"unknown input name": {`await ctx.publish("t", { messageId: "m", inputId: "files:file:nowhere", payload: {} });`, "not an input registered"},
			"caught host error":  {`try { await ctx.publish("t", { messageId: "m", payload: {} }); } catch (e) {} return { survived: true };`, "inputId"},
		}
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.deploy("bad", `export default Keep.workflow({
  name: "bad", topics: { t: {}, other: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx, state) => { `+c.body+` } } },
  consumers: {},
});`)
				b.drain()
				runs := b.runs("bad")
				if len(runs) != 1 || runs[0].Status != "failed:logic" || !strings.Contains(runs[0].Error, c.want) {
					t.Fatalf("runs = %+v, want failed:logic mentioning %q", runs, c.want)
				}
				if n := len(b.events("bad", "")); n != 0 {
					t.Fatalf("events = %d after a failed producer", n)
				}
			})
		}
	})
}

func TestDeploy(t *testing.T) {
	t.Parallel()

	t.Run("a new version keeps topics and events and lists the capabilities with their grants", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "alpha")
		res := b.deploy("notes", notesWorkflow)
		if !res.Created || res.Version != 1 {
			t.Fatalf("deploy = %+v", res)
		}
		caps := map[string]GrantMode{}
		for _, g := range res.Capabilities {
			caps[g.Capability] = g.Mode
		}
		if caps["files.append"] != "ask" || caps["files.write"] != "ask" {
			t.Fatalf("capabilities = %+v, want files.append and files.write as ask", res.Capabilities)
		}
		b.drain()
		before := b.events("notes", "")
		if res = b.deploy("notes", notesWorkflow); res.Version != 1 || !res.Unchanged {
			t.Fatalf("the same file deployed again = %+v, want version 1, unchanged", res)
		}
		res = b.deploy("notes", notesWorkflow+"\n// a second version\n")
		if res.Created || res.Version != 2 || res.Unchanged {
			t.Fatalf("redeploy = %+v", res)
		}
		after := b.events("notes", "")
		if len(after) != len(before) || after[0].Status != before[0].Status {
			t.Fatalf("events changed across deploy: %+v → %+v", before, after)
		}
	})

	t.Run("a broken script is refused with file:line:col and stores nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.e.Deploy(context.Background(), "broken.js", []byte("export default Keep.workflow({ name: \"x\", topics: {"), "")
		if err == nil || !strings.Contains(err.Error(), "broken.js:1:") {
			t.Fatalf("err = %v, want broken.js:1:col", err)
		}
		wfs, _ := b.e.Workflows(context.Background())
		if len(wfs) != 0 {
			t.Fatalf("workflows = %+v", wfs)
		}
	})
}
