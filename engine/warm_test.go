package engine

import (
	"sync"
	"testing"
	"time"

	"keep/sandbox"
)

// TestNewInputsWarmTheirConsumersWorkers: a producer run that registered
// new inputs starts, before its commit, the workers its consumers can use
// at once (a concurrency-2 consumer two, one at a time one, a consumer of a
// topic it did not publish to none); a run that found nothing new starts
// none. Not parallel: it holds the
// package's warmWorkers and phaseSlots.
func TestNewInputsWarmTheirConsumersWorkers(t *testing.T) {
	slotsOf(t, 4)
	var mu sync.Mutex
	var asked []int
	old := warmWorkers
	warmWorkers = func(_ sandbox.Limits, n int) {
		mu.Lock()
		asked = append(asked, n)
		mu.Unlock()
	}
	t.Cleanup(func() { warmWorkers = old })
	b := setup(t)
	b.deploy("warm", `export default Keep.workflow({
  name: "warm", topics: { t: {}, u: {}, v: {} },
  producers: { p: { publishes: ["t", "u"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ["a", "b"]) {
      const inputId = ctx.registerInput({ source: "files", type: "file", id, title: "File " + id });
      await ctx.publish(["t", "u"], { messageId: id, inputId, payload: {} });
    }
  } } },
  consumers: {
    many: Keep.consumer({ subscribe: ["t"], concurrency: 2,
      async prepare() { return { reservations: [], data: {} }; }, async mutate() {}, async next() {} }),
    one: Keep.consumer({ subscribe: ["u"],
      async prepare() { return { reservations: [], data: {} }; }, async mutate() {}, async next() {} }),
    other: Keep.consumer({ subscribe: ["v"], concurrency: 8,
      async prepare() { return { reservations: [], data: {} }; }, async mutate() {}, async next() {} }),
  },
});`)
	b.drain()
	mu.Lock()
	if len(asked) != 1 || asked[0] != 3 {
		t.Errorf("the run with new inputs asked for workers %v, want once for 3", asked)
	}
	asked = nil
	mu.Unlock()
	b.clock.Advance(5 * time.Minute)
	b.drain()
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 0 {
		t.Errorf("a run that found the same files again asked for workers %v, want none", asked)
	}
}
