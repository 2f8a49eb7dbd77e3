package engine

import (
	"context"
	"strings"
	"testing"
)

// notesWorkflow: a producer lists notes in inbox/, a consumer appends one
// line per note to log.csv and publishes "note.logged", a second consumer
// writes a receipt file per logged note.
const notesWorkflow = `
export default Keep.workflow({
  name: "notes",
  topics: { "note.found": {}, "note.logged": {} },
  producers: {
    scan: {
      publishes: ["note.found"],
      schedule: { interval: "5m" },
      handler: async (ctx, state) => {
        const files = await ctx.files.list({ dir: "inbox", glob: "*.txt" });
        for (const f of files) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name });
          await ctx.publish("note.found", { messageId: f.path, inputId, payload: { path: f.path, name: f.name } });
        }
        return { seen: (state?.seen ?? 0) + files.length };
      },
    },
  },
  consumers: {
    logNote: Keep.consumer({
      subscribe: ["note.found"],
      publishes: ["note.logged"],
      async prepare(ctx, state) {
        const [ev] = await ctx.peek("note.found", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        const note = await ctx.files.read({ path: ev.payload.path });
        return {
          reservations: [{ topic: "note.found", ids: [ev.messageId] }],
          data: { name: ev.payload.name, line: ev.payload.name + "," + note.content.trim() + "\n" },
          ui: { title: "Log " + ev.payload.name },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "log.csv", content: prepared.data.line });
      },
      async next(ctx, prepared, result) {
        if (result.status === "applied") {
          await ctx.publish("note.logged", { messageId: prepared.data.name, payload: { name: prepared.data.name } });
        }
        return { last: result.status };
      },
    }),
    receipt: Keep.consumer({
      subscribe: ["note.logged"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("note.logged");
        if (!ev) return { reservations: [], data: {} };
        return { reservations: [{ topic: "note.logged", ids: [ev.messageId] }], data: { name: ev.payload.name },
                 ui: { title: "Receipt for " + ev.payload.name } };
      },
      async mutate(ctx, prepared) {
        await ctx.files.write({ path: "receipts/" + prepared.data.name, content: "logged" });
      },
      async next() {},
    }),
  },
});
`

func TestPipeline(t *testing.T) {
	t.Parallel()

	t.Run("notes flow through two consumers and each input shows both outputs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.write("inbox/b.txt", "beta")
		b.deploy("notes", notesWorkflow)
		b.drain()

		if got := b.read("log.csv"); got != "a.txt,alpha\nb.txt,beta\n" {
			t.Fatalf("log.csv = %q", got)
		}
		if b.read("receipts/a.txt") != "logged" || b.read("receipts/b.txt") != "logged" {
			t.Fatal("receipts missing")
		}
		ins := b.inputs("notes")
		if len(ins) != 2 {
			t.Fatalf("inputs = %d, want 2", len(ins))
		}
		for _, in := range ins {
			if in.Status != InputDone {
				t.Errorf("input %s status %s, want done", in.Title, in.Status)
			}
			if len(in.Outputs) != 2 {
				t.Fatalf("input %s has %d outputs, want 2 (log line and receipt)", in.Title, len(in.Outputs))
			}
			if !strings.HasPrefix(in.Outputs[0].Title, "Log ") || !strings.HasPrefix(in.Outputs[1].Title, "Receipt for ") {
				t.Errorf("outputs of %s = %+v", in.Title, in.Outputs)
			}
		}
		// causal chain: note.logged events inherit the input of note.found
		for _, ev := range b.events("notes", "note.logged") {
			if len(ev.CausedBy) != 1 {
				t.Errorf("note.logged %s caused_by %v, want one input", ev.MessageID, ev.CausedBy)
			}
		}
		for _, m := range b.mutations("notes") {
			if m.Status != "applied" || m.ResolvedBy != "host" {
				t.Errorf("mutation %s: %s by %q", m.ID, m.Status, m.ResolvedBy)
			}
		}
	})

	t.Run("draining again finds nothing due and changes nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", notesWorkflow)
		b.drain()
		n := len(b.runs("notes"))
		b.drain()
		if got := len(b.runs("notes")); got != n {
			t.Fatalf("second drain made %d more runs", got-n)
		}
		next, err := b.e.NextDue(context.Background())
		if err != nil || next == nil {
			t.Fatalf("next due = %v, %v; want the producer's next run", next, err)
		}
	})
}
