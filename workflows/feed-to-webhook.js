// feed-to-webhook: every new item of a JSON feed is POSTed, once, to a
// webhook.
//
// Edit the two URLs below. FEED must answer a GET with JSON: either a list
// of items or {"items": [...]}, each item with an "id" (or "guid" or "url")
// and optionally "title", "url" and "published". WEBHOOK receives one POST
// per item, with a JSON body {id, title, url, published, source} and an
// Idempotency-Key header chosen by keep. If the outcome of a POST is unclear
// (a timeout, a dropped connection), keep asks WEBHOOK by a GET carrying
// the same Idempotency-Key whether the delivery arrived: answer 2xx if it
// did and 404 if it did not (anything else: keep asks again later).
// If [connectors.http] allow_hosts is set, both hosts must be in it.

const FEED = "http://127.0.0.1:8080/feed.json";
const WEBHOOK = "http://127.0.0.1:8080/webhook";

// itemId is the item's stable identity in the feed.
function itemId(item) {
  return String(item.id ?? item.guid ?? item.url ?? "");
}

export default Keep.workflow({
  name: "feed-to-webhook",

  topics: {
    "item.found": {},
  },

  producers: {
    pollFeed: {
      publishes: ["item.found"],
      schedule: { interval: "5m" },
      // The cursor is the feed's ETag: an unchanged feed answers 304 and
      // costs nothing. Items seen before are re-published harmlessly (the
      // host deduplicates by messageId, the item's id).
      handler: async (ctx, state) => {
        const headers = { Accept: "application/json" };
        if (state?.etag) headers["If-None-Match"] = state.etag;
        const res = await ctx.http.get({ url: FEED, headers });
        if (res.status === 304) return state;
        if (res.status !== 200) throw new Error(`GET ${FEED} answered ${res.status}: ${res.body.slice(0, 200)}`);
        if (res.json === null || typeof res.json !== "object") throw new Error(`${FEED} did not answer JSON`);
        const items = Array.isArray(res.json) ? res.json : (res.json.items ?? []);

        let published = 0;
        for (const item of items) {
          const id = itemId(item);
          if (id === "") {
            console.warn(`skipping a feed item without an id: ${JSON.stringify(item).slice(0, 120)}`);
            continue;
          }
          const title = String(item.title ?? item.url ?? id);
          const inputId = ctx.registerInput({
            source: "http",
            type: "resource",
            id,
            title: `Feed item ${id}: "${title}"`,
          });
          await ctx.publish("item.found", {
            messageId: id,
            inputId,
            payload: { id, title, url: item.url ?? null, published: item.published ?? null },
          });
          published++;
        }
        return { etag: res.headers["etag"] ?? null, lastCount: published };
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
            body: { id: item.id, title: item.title, url: item.url, published: item.published, source: FEED },
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
