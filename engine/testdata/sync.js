// sync reads an item from the test server and posts it back: the workflow of
// the account tests, which put the server's address in place of the capitals.
export default Keep.workflow({ name: "sync", topics: { item: {} },
  producers: { fetch: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.http.get({ url: API + "/items" });
    const id = ctx.registerInput({ source: "http", type: "resource", id: r.json.id, title: "Item " + r.json.id });
    await ctx.publish("item", { messageId: r.json.id, inputId: id, payload: { id: r.json.id } });
  } } },
  consumers: { push: Keep.consumer({ subscribe: ["item"],
    async prepare(ctx) { const [e] = await ctx.peek("item"); return e ? { reservations: [{ topic: "item", ids: [e.messageId] }], data: e.payload } : { reservations: [], data: {} }; },
    async mutate(ctx, p) { await ctx.http.request({ method: "POST", url: API + "/done", json: { id: p.data.id } }); },
    async next() {} }) } });
