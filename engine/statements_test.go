package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// statementsPerItemBudget is what one item of the files→http job
// (BenchmarkFilesPost's workflow: a producer publishes an event per item, a
// consumer peeks, reserves and POSTs with a reconcile URL, its next empty)
// may cost the database: statements per item at concurrency 1. It counts,
// it does not time: a change that adds a statement to the path fails
// here, and one that takes some off lowers the budget. Before the step's
// snapshot read on the writer connection (storage.ReadLatest) an item took
// 30.3; then 28.3; with the applied outcome and the run's commit written
// in one update of the run (ledger.RecordOutcomeUnwritten), 27.3; with
// the step's workflow, schedules and active runs read in one statement
// (storage.StepReads), the call's status, block and grants in one
// (CallReads) and the consumer's state with its peek in one
// (StateAndPeek), 23.2.
const statementsPerItemBudget = 23.5

// bTreesPerItemBudget: the temporary b-trees an item's statements build
// (storage.DB.TemporaryBTrees, by EXPLAIN): each IN over three or more
// constants builds one every time its statement runs. Before migration 15
// rewrote the schema's lists (CHECKs, a partial index, triggers) 21; now
// 2, neither a list: the event's insert RETURNING its row (SQLite holds
// returned rows in one) and the mutation's INSERT … SELECT from its own
// table (rewritten without it and measured: no change, reverted).
const bTreesPerItemBudget = 2

// logBytesPerItemBudget: the bytes of pages an item's commits write to the
// log at concurrency 1: 26.3 pages of 4 KiB (107,900 bytes) before keep
// made its databases with 2 KiB pages, 28.0 of them (57,300) after.
const logBytesPerItemBudget = 60_000

// timedStatements are statements whose number per item depends on the
// timing, not on the path: the savepoints of writes that share a commit,
// and the read transaction of a snapshot that found a write under way
// (ReadLatest's fallback).
func timedStatement(q string) bool {
	for _, p := range []string{"SAVEPOINT", "RELEASE", "ROLLBACK TO", "BEGIN", "ROLLBACK"} {
		if q == p || strings.HasPrefix(q, p+" ") {
			return q != "BEGIN IMMEDIATE"
		}
	}
	return false
}

// TestStatementsPerItem runs the files→http job's consumer over n items on
// a real engine and counts every statement storage runs for them, by text:
// reads, writes, transactions and the log's syncs.
func TestStatementsPerItem(t *testing.T) {
	const n = 200
	for _, conc := range []int{1, 8} {
		t.Run(fmt.Sprint("concurrency ", conc), func(t *testing.T) {
			b := setup(t, allowMutations)
			s := newCountingSink(t)
			b.deploy("fan", filesPostLike(s.srv.URL, n, conc))
			var mu sync.Mutex
			byText := map[string]int{}
			stop := b.db.CountStatements(func(q string) {
				mu.Lock()
				byText[q]++
				mu.Unlock()
			})
			syncs, pages := b.db.Syncs(), b.db.PagesWritten()
			b.drain()
			stop()
			syncs, pages = b.db.Syncs()-syncs, b.db.PagesWritten()-pages
			b.consumedOnce(s, "fan", n)

			mu.Lock()
			defer mu.Unlock()
			total, timed := 0, 0
			texts := make([]string, 0, len(byText))
			for q, k := range byText {
				texts = append(texts, q)
				total += k
				if timedStatement(q) {
					timed += k
				}
			}
			sort.Slice(texts, func(i, j int) bool { return byText[texts[i]] > byText[texts[j]] })
			var out strings.Builder
			btrees := 0
			for _, q := range texts {
				k := 0
				if !timedStatement(q) && !strings.HasPrefix(q, "PRAGMA") && q != "BEGIN IMMEDIATE" && q != "COMMIT" {
					var err error
					if k, err = b.db.TemporaryBTrees(context.Background(), q); err != nil {
						t.Fatal(err)
					}
				}
				btrees += k * byText[q]
				fmt.Fprintf(&out, "%7.2f  %s  (%d temporary b-trees)\n", float64(byText[q])/n, oneLine(q), k)
			}
			t.Logf("per item, over %d items at concurrency %d: %.2f statements (%.2f of them savepoints and read transactions, which vary with the timing), %.2f write transactions, %.2f read transactions, %.2f syncs, %.2f pages written to the log, %.2f temporary b-trees\n%s",
				n, conc, float64(total)/n, float64(timed)/n, float64(byText["BEGIN IMMEDIATE"])/n, float64(byText["BEGIN"])/n, float64(syncs)/n, float64(pages)/n, float64(btrees)/n, out.String())
			if per := float64(btrees) / n; per > bTreesPerItemBudget {
				t.Errorf("%.2f temporary b-trees per item, more than the budget of %d", per, bTreesPerItemBudget)
			}
			size, err := b.db.PageSize(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if per := float64(pages*size) / n; conc == 1 && per > logBytesPerItemBudget {
				t.Errorf("%.0f bytes of %d-byte pages written to the log per item, more than the budget of %d", per, size, logBytesPerItemBudget)
			}
			// one at a time, the step finds the writer free: every statement
			// counts; at 8, those that vary with the timing do not
			per := float64(total) / n
			if conc > 1 {
				per = float64(total-timed) / n
			}
			if per > statementsPerItemBudget {
				t.Errorf("%.2f statements per item, more than the budget of %g", per, statementsPerItemBudget)
			}
		})
	}
}

func oneLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 150 {
		q = q[:150] + "…"
	}
	return q
}

// filesPostLike is BenchmarkFilesPost's workflow with the items published
// by one producer run (the files producer lists a folder instead).
func filesPostLike(url string, n, concurrency int) string {
	return strings.NewReplacer("N", fmt.Sprint(n), "CONC", fmt.Sprint(concurrency), "SINK", url).Replace(`
export default Keep.workflow({
  name: "fan",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (let i = 0; i < N; i++) {
      const id = "item-" + i;
      const inputId = ctx.registerInput({ source: "files", type: "file", id, title: "File " + id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { push: Keep.consumer({
    subscribe: ["item"],
    concurrency: CONC,
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.payload.id }, ui: { title: "Post " + e.payload.id } };
    },
    async mutate(ctx, p) {
      await ctx.http.request({ method: "POST", url: "SINK/items", json: { id: p.data.id }, reconcile: { url: "SINK/items/" + p.data.id } });
    },
    async next() {},
  }) },
});`)
}
