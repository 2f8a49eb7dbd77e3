export default Keep.workflow({
  name: "notes",
  topics: { "note.found": {} },
  producers: {
    scan: { publishes: ["note.found"], schedule: { interval: "1h" }, handler: async (ctx) => {
      for (const f of await ctx.files.list({ dir: "inbox", glob: "*.txt" })) {
        const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name });
        await ctx.publish("note.found", { messageId: f.path, inputId, payload: { name: f.name } });
      }
    } },
  },
  consumers: {
    log: Keep.consumer({
      subscribe: ["note.found"],
      async prepare(ctx) {
        const [e] = await ctx.peek("note.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "note.found", ids: [e.messageId] }], data: e.payload, ui: { title: "Log " + e.payload.name } };
      },
      async mutate(ctx, p) { await ctx.files.append({ path: "log.txt", content: p.data.name + "\n" }); },
      async next() {},
    }),
  },
});
