package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestSkipDuringPrepareIsNotTheScripts: the person's skip of an event (or
// of its input) while a prepare that has read it is still running must not
// turn into a failure of the script — a logic failure that asks for a
// repair — when that prepare reserves the event it read. The answer waits
// for a moment when no run is under way (it is refused meanwhile), as
// skip-input's already did.
func TestSkipDuringPrepareIsNotTheScripts(t *testing.T) {
	t.Parallel()
	for _, what := range []string{"event", "input"} {
		t.Run("skip "+what, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t)
			var mu sync.Mutex
			var skipErr error
			skipping := false
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if !skipping {
					return
				}
				skipping = false
				// the person answers while prepare, having read the event,
				// waits on this read
				if what == "event" {
					skipErr = b.e.SkipEvents(ctx, []string{b.events("r", "t")[0].ID})
				} else {
					skipErr = b.e.SkipInput(ctx, b.inputs("r")[0].InputID)
				}
			}))
			t.Cleanup(srv.Close)
			b.deploy("r", strings.ReplaceAll(`export default Keep.workflow({ name: "r", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "One" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      const [e] = await ctx.peek("t");
      if (!e) return { reservations: [], data: {} };
      await ctx.http.get({ url: URL + "/c" });
      return { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} };
    },
    async mutate() {}, async next() {} }) } });`, "URL", `"`+srv.URL+`"`))
			mu.Lock()
			skipping = true
			mu.Unlock()
			b.drain()
			for _, r := range b.runs("r") {
				if strings.HasPrefix(string(r.Status), "failed") {
					t.Fatalf("run %+v: the person's skip made the script's run fail", r)
				}
			}
			if w := b.workflowRow("r"); w.BlockKind != BlockNone {
				t.Fatalf("workflow blocked (%s: %s) by the person's skip", w.BlockKind, w.BlockReason)
			}
			mu.Lock()
			defer mu.Unlock()
			if skipErr != nil && !errors.Is(skipErr, ErrRefused) {
				t.Fatalf("skip: %v", skipErr)
			}
		})
	}
}
