package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// Benchmarks run against the same real pieces as the tests (SQLite in a temp
// dir, the files connector on a temp root, the fake clock), so what they
// measure includes every fsync a run makes. Nothing here asserts a time.
// The history benchmarks (peek and the inputs page under a long history)
// live in engine/benchmark, on the seeding `keep bench` uses.

// benchProducer is version 1 of the "bench" workflow: one producer run
// registers %d inputs and publishes one "item" event for each.
const benchProducer = `
export default Keep.workflow({
  name: "bench",
  topics: { "item": {} },
  producers: {
    fill: {
      publishes: ["item"],
      schedule: { interval: "1h" },
      handler: async (ctx) => {
        for (let i = 0; i < %d; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "item-" + i, title: "Item " + i });
          await ctx.publish("item", { messageId: "item-" + i, inputId, payload: { n: i } });
        }
        return {};
      },
    },
  },
});
`

// benchConsumer is version 2: the same producer, and a consumer whose run
// peeks one event, reserves it, appends a line to a local file and commits.
const benchConsumer = `
export default Keep.workflow({
  name: "bench",
  topics: { "item": {} },
  producers: {
    fill: {
      publishes: ["item"],
      schedule: { interval: "1h" },
      handler: async () => ({}),
    },
  },
  consumers: {
    record: Keep.consumer({
      subscribe: ["item"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("item", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "item", ids: [ev.messageId] }],
          data: { line: ev.messageId + "," + ev.payload.n + "\n" },
          ui: { title: "Record " + ev.messageId },
        };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "log.csv", content: prepared.data.line });
      },
      async next(ctx, prepared, result) {
        return { last: result.status };
      },
    }),
  },
});
`

// BenchmarkConsumerRun times one consumer run end to end: prepare (peek and
// reserve), a files.append into the temp root, next, commit. The b.N events
// are published before the timer starts, by a producer-only version of the
// workflow; the consumer arrives with version 2 (the producer is not due
// again, so the timed drain is consumer runs only).
func BenchmarkConsumerRun(b *testing.B) {
	bb := setup(b, allowMutations)
	bb.deploy("bench", fmt.Sprintf(benchProducer, b.N))
	bb.drain()
	ctx := context.Background()
	w, err := bb.db.Read().WorkflowByName(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	wfID := w.ID
	if evs, err := bb.db.Read().Peek(ctx, wfID, "item", b.N+1); err != nil || len(evs) != b.N {
		rs, _ := bb.e.Runs(ctx, "bench", api.Page{Limit: 1})
		b.Fatalf("%d events pending after the producer, want %d (err %v, runs %+v)", len(evs), b.N, err, rs)
	}
	bb.deploy("bench", benchConsumer)

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	bb.drain()
	elapsed := time.Since(start)
	b.StopTimer()

	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
	data, err := os.ReadFile(filepath.Join(bb.root, "log.csv"))
	if err != nil {
		b.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != b.N {
		b.Fatalf("log.csv has %d lines, want %d", n, b.N)
	}
	pending, err := bb.db.Read().Peek(ctx, wfID, "item", 10)
	if err != nil {
		b.Fatal(err)
	}
	if len(pending) != 0 {
		b.Fatalf("%d events still pending after the drain", len(pending))
	}
}
