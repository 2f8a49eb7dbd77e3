// @ts-check
// feed-to-webhook: every new item of a feed (RSS 2.0, Atom or JSON Feed) is
// POSTed, once, to a webhook.
//
// Edit the two URLs below. WEBHOOK receives one POST per item, with a JSON
// body {id, title, url, published, summary, source} and an Idempotency-Key
// header chosen by keep. If the outcome of a POST is unclear (a timeout, a
// dropped connection), keep asks WEBHOOK by a GET carrying the same
// Idempotency-Key whether the delivery arrived: answer 2xx if it did and 404
// if it did not (anything else: keep asks again later).
// If [connectors.http] allow_hosts is set, both hosts must be in it.

const FEED = "http://127.0.0.1:8080/feed.xml";
const WEBHOOK = "http://127.0.0.1:8080/webhook";

export default Keep.workflow({
  name: "feed-to-webhook",

  topics: {
    "item.found": {},
  },

  producers: {
    pollFeed: {
      publishes: ["item.found"],
      schedule: { interval: "5m" },
      // ctx.feed.items asks with the feed's ETag and Last-Modified, so an
      // unchanged feed costs a 304; it still lists every item. Items seen
      // before are re-published harmlessly: the host deduplicates by
      // messageId, the item's id (its guid, Atom id or JSON Feed id).
      handler: async (ctx, state) => {
        const items = await ctx.feed.items({ url: FEED });
        for (const item of items) {
          const title = item.title || item.url || item.id;
          const inputId = ctx.registerInput({
            source: "feed",
            type: "item",
            id: item.id,
            title: `Feed item ${item.id}: "${title}"`,
          });
          await ctx.publish("item.found", {
            messageId: item.id,
            inputId,
            payload: { id: item.id, title, url: item.url, published: item.published, summary: item.summary },
          });
        }
        return { lastCount: items.length };
      },
    },
  },

  consumers: {
    postItem: Keep.consumer({
      subscribe: ["item.found"],

      // One item per run, oldest first: one run, one POST.
      async prepare(ctx, state) {
        const [event] = await ctx.peek("item.found", { limit: 1 });
        if (!event) return { reservations: [], data: {} };
        const item = event.payload;
        return {
          reservations: [{ topic: "item.found", ids: [event.messageId] }],
          data: {
            body: { id: item.id, title: item.title, url: item.url, published: item.published, summary: item.summary, source: FEED },
            id: item.id,
            delivered: state?.delivered ?? 0,
          },
          ui: { title: `Send "${item.title}" to the webhook` },
        };
      },

      async mutate(ctx, prepared) {
        await ctx.http.request({
          method: "POST",
          url: WEBHOOK,
          json: prepared.data.body,
          reconcile: { url: WEBHOOK },
        });
      },

      async next(ctx, prepared, mutationResult) {
        switch (mutationResult.status) {
          case "applied":
            return { delivered: prepared.data.delivered + 1, last: prepared.data.id };
          case "skipped":
            console.log(`item ${prepared.data.id} was skipped, not sent`);
            return;
          case "none":
            return; // nothing was pending
        }
      },
    }),
  },
});
