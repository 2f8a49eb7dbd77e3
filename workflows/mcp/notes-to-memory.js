// Remembers every note in ~/Keep/notes as an entity of an MCP server's
// knowledge graph (@modelcontextprotocol/server-memory): reads are reads,
// the create is a mutation in keep's ledger, approved once, never repeated.
//
// It needs this in the config (it is not written by `keep init`):
//
//   [mcp.memory]
//   command = "npx"
//   args = ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]
//   env = { MEMORY_FILE_PATH = "/home/me/Keep/memory.jsonl" }
//   reads = ["read_graph", "search_nodes", "open_nodes"]
export default Keep.workflow({
  name: "notes-to-memory",
  topics: { note: {} },
  producers: {
    scan: {
      publishes: ["note"],
      schedule: { interval: "5m" },
      handler: async (ctx) => {
        const files = await ctx.files.list({ dir: "notes", glob: "*.txt" });
        for (const f of files) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: f.name });
          await ctx.publish("note", { messageId: f.path, inputId, payload: { path: f.path, name: f.name.replace(/\.txt$/, "") } });
        }
      },
    },
  },
  consumers: {
    remember: Keep.consumer({
      subscribe: ["note"],
      async prepare(ctx) {
        const [e] = await ctx.peek("note", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        const file = await ctx.files.read({ path: e.payload.path });
        // a read tool: allowed here, where reads belong
        const found = await ctx.mcp.memory.open_nodes({ names: [e.payload.name] });
        const known = (found.json?.entities ?? []).length > 0;
        return {
          reservations: [{ topic: "note", ids: [e.messageId] }],
          data: { name: e.payload.name, text: file.content.trim(), known },
          ui: { title: "Remember the note " + e.payload.name },
        };
      },
      async mutate(ctx, p) {
        if (p.data.known) return; // nothing to do: no mutation
        // a mutation: terminal, approved per mcp.memory.create_entities, and
        // if the server dies mid-call, open_nodes tells whether it happened
        await ctx.mcp.memory.create_entities({
          entities: [{ name: p.data.name, entityType: "note", observations: [p.data.text] }],
          reconcile: { tool: "open_nodes", args: { names: [p.data.name] }, match: { entities: [{ name: p.data.name }] } },
        });
      },
      async next(ctx, p, r) {},
    }),
  },
});
