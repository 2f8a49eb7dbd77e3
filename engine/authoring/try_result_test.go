package authoring_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/enginetest"
)

// chainWorkflow files each note, and its next publishes what the write
// answered (the path written), which another consumer logs: the shape
// 06b gives next, "events derived from the mutation result".
const chainWorkflow = `export default Keep.workflow({
  name: "chain",
  topics: { "note.found": {}, "note.filed": {} },
  producers: {
    scan: { publishes: ["note.found"], schedule: { interval: "1h" }, handler: async (ctx) => {
      for (const name of ["x", "y"]) {
        const inputId = ctx.registerInput({ source: "files", type: "file", id: name, title: "Note " + name });
        await ctx.publish("note.found", { messageId: name, inputId, payload: { name } });
      }
    } },
  },
  consumers: {
    file: Keep.consumer({
      subscribe: ["note.found"],
      publishes: ["note.filed"],
      async prepare(ctx) {
        const [e] = await ctx.peek("note.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "note.found", ids: [e.messageId] }], data: e.payload, ui: { title: "File " + e.payload.name } };
      },
      async mutate(ctx, p) { await ctx.files.write({ path: "out/" + p.data.name + ".txt", content: "hi\n" }); },
      async next(ctx, p, r) {
        if (r.status === "applied") await ctx.publish("note.filed", { messageId: r.result.path, payload: { path: r.result.path, size: r.result.size } });
      },
    }),
    log: Keep.consumer({
      subscribe: ["note.filed"],
      async prepare(ctx) {
        const [e] = await ctx.peek("note.filed", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "note.filed", ids: [e.messageId] }], data: e.payload, ui: { title: "Log " + e.payload.path } };
      },
      async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: p.data.path.toUpperCase() + " " + p.data.size.toFixed(0) + "\n" }); },
      async next() {},
    }),
  },
});
`

// A captured mutation answered {dryRun: true} whatever the method: a next
// that reads what the call returned (the path written, the event's uid)
// failed in the dry run where the real run goes on, keep try exited 1 on
// a working file, keep new handed the "failure" to the model to fix, and
// what would follow the mutation was never shown. A captured call is
// answered in the shape of the method's result.
func TestADryRunAnswersAMutationInItsResultsShape(t *testing.T) {
	b := enginetest.New(t, enginetest.Opts{})
	rep, err := authoring.Try(context.Background(), b.E.Registry(), b.E.Policy(), "chain.js", []byte(chainWorkflow), api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Failed() {
		t.Errorf("run %s (%s %s) failed in the dry run: %s", r.ID, r.HandlerType, r.Handler, r.Error)
	}
	var writes, appends []string
	for _, m := range rep.Mutations {
		switch m.Method {
		case "write":
			writes = append(writes, string(m.Params))
		case "append":
			appends = append(appends, string(m.Params))
		}
	}
	if len(writes) != 2 || len(appends) != 2 {
		t.Fatalf("mutations shown: %d writes, %d appends; want 2 of each (what follows a write shown too):\n%+v", len(writes), len(appends), rep.Mutations)
	}
	for _, a := range appends {
		if a != `{"content":"OUT/X.TXT 0\n","path":"log.txt"}` && a != `{"content":"OUT/Y.TXT 0\n","path":"log.txt"}` {
			t.Errorf("an append from the write's answered path: %s", a)
		}
	}
	if _, err := os.Stat(filepath.Join(b.Root, "out")); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote for real: %v", err)
	}
}
