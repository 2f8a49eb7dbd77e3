package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/enginetest/kit"
)

// sink is kit's: a real HTTP service a workflow posts items to, applying
// each once per idempotency key, failing on purpose when told.
type sink = kit.Sink

func newSink(t *testing.T) *sink { return kit.NewSink(t) }

// pushWorkflow posts one item per event to the sink, with a reconcile URL.
func pushWorkflow(url string, items ...string) string {
	list, _ := json.Marshal(items)
	return strings.NewReplacer("SINK", `"`+url+`"`, "ITEMS", string(list)).Replace(`
export default Keep.workflow({
  name: "push",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ITEMS) {
      const inputId = ctx.registerInput({ source: "http", type: "resource", id, title: "Item " + id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { push: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.payload.id }, ui: { title: "Push " + e.payload.id } };
    },
    async mutate(ctx, p) {
      await ctx.http.request({ method: "POST", url: SINK + "/items", json: { id: p.data.id }, reconcile: { url: SINK + "/items/" + p.data.id } });
      console.log("after the mutation call");
    },
    async next(ctx, p, r) { if (r.status !== "none") return { last: r.status }; },
  }) },
});`)
}

func (b *bundle) mutationsBy(status string) []api.MutationView {
	b.t.Helper()
	ms, err := b.e.Mutations(context.Background(), "push", status)
	if err != nil {
		b.t.Fatal(err)
	}
	return ms
}

// drainUntilQuiet advances the clock to each next due time and drains,
// until nothing is scheduled within the horizon.
func (b *bundle) drainUntilQuiet(horizon time.Duration) {
	b.t.Helper()
	kit.DrainUntilQuiet(b.t, b.clock, horizon, b.drain, func() (*time.Time, error) { return b.e.NextDue(context.Background()) })
}
