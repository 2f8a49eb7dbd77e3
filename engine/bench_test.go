package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/config"
	"keep/storage"
)

// Benchmarks run against the same real pieces as the tests (SQLite in a temp
// dir, the files connector on a temp root, the fake clock), so what they
// measure includes every fsync a run makes. Nothing here asserts a time.

// benchBundle is setup()'s bundle for benchmarks: the same engine, database
// and connectors, reporting through testing.TB.
type benchBundle struct {
	tb    testing.TB
	e     *Engine
	db    *storage.DB
	clock *clock
	root  string
}

// setupB mirrors setup(): a real database in a temp dir and an engine on it,
// with the files and sheets connectors rooted in another temp dir.
func setupB(tb testing.TB, opts ...setupOpt) *benchBundle {
	tb.Helper()
	dir := tb.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		tb.Fatal(err)
	}
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{root}
	cfg.Connectors.Sheets.Roots = []string{root}
	for _, o := range opts {
		o(&cfg)
	}
	bb := &benchBundle{tb: tb, clock: &clock{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}, root: root}
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(dir, "keep.db")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	reg, err := Connectors(cfg, ConnectorOpts{})
	if err != nil {
		tb.Fatal(err)
	}
	e, err := New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(cfg.Policy), Now: bb.clock.Now})
	if err != nil {
		tb.Fatal(err)
	}
	bb.db, bb.e = db, e
	return bb
}

func (bb *benchBundle) deploy(name, src string) {
	bb.tb.Helper()
	if _, err := bb.e.Deploy(context.Background(), name+".js", []byte(src), ""); err != nil {
		bb.tb.Fatalf("deploy %s: %v", name, err)
	}
}

func (bb *benchBundle) drain() {
	bb.tb.Helper()
	if err := bb.e.Drain(context.Background()); err != nil {
		bb.tb.Fatalf("drain: %v", err)
	}
}

func (bb *benchBundle) workflowID(name string) int64 {
	bb.tb.Helper()
	w, err := bb.db.Read().WorkflowByName(context.Background(), name)
	if err != nil {
		bb.tb.Fatal(err)
	}
	return w.ID
}

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
	bb := setupB(b, allowMutations)
	bb.deploy("bench", fmt.Sprintf(benchProducer, b.N))
	bb.drain()
	ctx := context.Background()
	wfID := bb.workflowID("bench")
	if evs, err := bb.db.Read().Peek(ctx, wfID, "item", b.N+1); err != nil || len(evs) != b.N {
		rs, _ := bb.e.Runs(ctx, "bench", Page{Limit: 1})
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

// historySizes are the consumed events in history under the 100 pending.
var historySizes = []int{10_000, 100_000}

const (
	historyChunk = 10_000 // rows per write transaction
	pendingCount = 100
)

// historyWorkflow declares the topic the history lives in; it is deployed
// and never drained.
const historyWorkflow = `
export default Keep.workflow({
  name: "history",
  topics: { "item": {} },
  consumers: {
    record: Keep.consumer({
      subscribe: ["item"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("item", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return { reservations: [{ topic: "item", ids: [ev.messageId] }], data: {} };
      },
      async mutate() {},
      async next() {},
    }),
  },
});
`

// setupHistory builds a workflow whose topic "item" holds consumed events
// followed by pendingCount pending ones, each event caused by its own input
// and each consumed one reserved and consumed by its own committed run, the
// rows a long-lived workflow leaves behind. It writes through storage, in
// transactions of historyChunk events.
func setupHistory(tb testing.TB, consumed int) (*benchBundle, int64) {
	tb.Helper()
	bb := setupB(tb)
	bb.deploy("history", historyWorkflow)
	wfID := bb.workflowID("history")
	ctx := context.Background()
	start := time.Now()
	now := bb.clock.Now()
	payload := json.RawMessage(`{"n":0}`)
	next := int64(1) // input ids; the engine registers none here
	add := func(tx *storage.Tx, consume bool) error {
		in := &storage.Input{ID: next, WorkflowID: wfID, Source: "files", Type: "file",
			ExternalID: fmt.Sprintf("item-%d", next), Title: fmt.Sprintf("Item %d", next), CreatedAt: now}
		next++
		if err := tx.InsertInput(ctx, in); err != nil {
			return err
		}
		evID, err := tx.PublishEvent(ctx, wfID, "item", in.ExternalID, payload, 0, []int64{in.ID}, now)
		if err != nil {
			return err
		}
		if !consume {
			return nil
		}
		closed := now
		run := &storage.Run{WorkflowID: wfID, Handler: "record", HandlerType: "consumer", ScriptVersion: 1,
			Phase: "committed", Status: "committed", ClosedAt: &closed, CreatedAt: now, UpdatedAt: now}
		runID, err := tx.InsertRun(ctx, run)
		if err != nil {
			return err
		}
		if err := tx.Reserve(ctx, wfID, runID, []int64{evID}, now); err != nil {
			return err
		}
		return tx.Consume(ctx, runID, "consumed", now)
	}
	for done := 0; done < consumed; done += historyChunk {
		n := min(historyChunk, consumed-done)
		if err := bb.db.Write(ctx, func(tx *storage.Tx) error {
			for range n {
				if err := add(tx, true); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := bb.db.Write(ctx, func(tx *storage.Tx) error {
		for range pendingCount {
			if err := add(tx, false); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("history of %d consumed + %d pending events built in %s", consumed, pendingCount, time.Since(start).Round(time.Millisecond))
	return bb, wfID
}

// BenchmarkPeek times a page of 100 pending events under a long history of
// consumed ones. The partial index events_open holds only pending events, so
// the cost should be the page's, the same at every history size.
func BenchmarkPeek(b *testing.B) {
	for _, size := range historySizes {
		// built once here: a sub-benchmark's body runs more than once
		bb, wfID := setupHistory(b, size)
		b.Run(fmt.Sprintf("history=%d", size), func(b *testing.B) {
			ctx := context.Background()
			q := bb.db.Read()
			evs, err := q.Peek(ctx, wfID, "item", pendingCount)
			if err != nil {
				b.Fatal(err)
			}
			if len(evs) != pendingCount || evs[0].Status != "pending" {
				b.Fatalf("peek = %d events, want %d pending", len(evs), pendingCount)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.Peek(ctx, wfID, "item", pendingCount); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInputsPage times the first page of 50 inputs, with their status
// facts and outputs, under the same histories.
func BenchmarkInputsPage(b *testing.B) {
	for _, size := range historySizes {
		bb, _ := setupHistory(b, size)
		b.Run(fmt.Sprintf("history=%d", size), func(b *testing.B) {
			ctx := context.Background()
			ins, err := bb.e.Inputs(ctx, "history", Page{Limit: 50})
			if err != nil {
				b.Fatal(err)
			}
			if len(ins) != 50 || ins[0].Status == InputDone || ins[49].Status == InputDone {
				b.Fatalf("inputs page = %d inputs, want 50 still open", len(ins))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.e.Inputs(ctx, "history", Page{Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
