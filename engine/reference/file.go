package reference

// FileExample is a whole workflow file, every declaration in place: what
// the reference's readers (a person, `keep new`'s model, an assistant over
// MCP) write around the calls the rest of the reference lists. A test
// validates it.
const FileExample = `export default Keep.workflow({
  name: "notes",                     // a lowercase letter or digit, then a-z 0-9 - _ . (at most 100)
  topics: { "note.found": {} },      // every topic a handler publishes or subscribes to
  producers: {
    scan: {
      publishes: ["note.found"],     // the topics its handler may publish
      schedule: { interval: "5m" },  // see PRODUCER SCHEDULES
      handler: async (ctx, state) => {
        for (const f of await ctx.files.list({ dir: "inbox", glob: "*.txt" })) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name });
          await ctx.publish("note.found", { messageId: f.path, inputId, payload: { name: f.name } });
        }
      },
    },
  },
  consumers: {
    log: Keep.consumer({
      subscribe: ["note.found"],     // also publishes: [...] for what next publishes; concurrency: 1 to 64
      async prepare(ctx, state) {
        const [e] = await ctx.peek("note.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "note.found", ids: [e.messageId] }], data: { name: e.payload.name },
                 ui: { title: "Log " + e.payload.name } };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "log.csv", content: prepared.data.name + "\n" });
      },
      async next(ctx, prepared, mutationResult) {},
    }),
  },
});
`
