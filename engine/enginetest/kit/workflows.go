package kit

// NotesWorkflow: a producer lists notes in inbox/, a consumer appends one
// line per note to log.csv and publishes "note.logged", a second consumer
// writes a receipt file per logged note.
const NotesWorkflow = `
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
