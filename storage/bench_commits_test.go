package storage

import (
	"context"
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkItemCommits is the database work of one item of the files→http
// job's consumer, as the ledger writes it: the run's start (unsynced), the
// prepared checkpoint with its reservation and in_flight mutation (synced,
// before the call), and the outcome with the run's commit, its event
// consumed and its trace. The producer's publish is done before the timer,
// in one transaction, as the files producer does. It reports the pages
// and bytes written to the log per item beside the time.
func BenchmarkItemCommits(b *testing.B) {
	db, wf, in := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	ids := make([]int64, 0, b.N)
	if err := db.WriteUnsynced(ctx, func(tx *Tx) error {
		for i := range b.N {
			id, err := tx.PublishEvent(ctx, wf, "t", "file-"+strconv.Itoa(i), json.RawMessage(`{"id":"file-`+strconv.Itoa(i)+`"}`), 0, []int64{in}, now)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	size, err := db.PageSize(ctx)
	if err != nil {
		b.Fatal(err)
	}
	pages, cpu := db.PagesWritten(), cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		r := &Run{WorkflowID: wf, Handler: "push", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
			Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
		if err := db.WriteUnsynced(ctx, func(tx *Tx) error {
			_, err := tx.InsertRun(ctx, r)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		m := &Mutation{RunID: r.ID, WorkflowID: wf, Connector: "http", Method: "post",
			Params:  json.RawMessage(`{"url":"http://127.0.0.1:1/sink","body":{"id":"file-` + strconv.Itoa(i) + `"}}`),
			UITitle: "Post file-" + strconv.Itoa(i), Status: MutationInFlight, Attempts: 1, CreatedAt: now, UpdatedAt: now}
		if err := db.Write(ctx, func(tx *Tx) error {
			if err := tx.Reserve(ctx, wf, r.ID, ids[i:i+1], now); err != nil {
				return err
			}
			if err := tx.InsertMutation(ctx, m, "keep-bench"); err != nil {
				return err
			}
			r.Phase, r.MutationID = PhaseMutating, m.ID
			r.PrepareResult = json.RawMessage(`{"reservations":[{"topic":"t","ids":["file-` + strconv.Itoa(i) + `"]}],"data":{"id":"file-` + strconv.Itoa(i) + `"}}`)
			return tx.UpdateRun(ctx, r)
		}); err != nil {
			b.Fatal(err)
		}
		if err := db.WriteUnsynced(ctx, func(tx *Tx) error {
			m.Status, m.Result, m.ResolvedBy = MutationApplied, json.RawMessage(`{"status":200}`), "host"
			if err := tx.UpdateMutation(ctx, m); err != nil {
				return err
			}
			closed := now
			r.Phase, r.Status, r.ClosedAt, r.MutationResult = PhaseCommitted, RunCommitted, &closed, json.RawMessage(`{"status":200}`)
			if err := tx.UpdateRun(ctx, r); err != nil {
				return err
			}
			if err := tx.Consume(ctx, r.ID, EventConsumed, now); err != nil {
				return err
			}
			return tx.AddTrace(ctx, []TraceEntry{{RunID: r.ID, At: now, Phase: "mutate", Kind: "call", Connector: "http",
				Method: "post", Args: `{"url":"http://127.0.0.1:1/sink"}`, Result: `{"status":200}`, DurationMS: 1}})
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/item")
	per := float64(db.PagesWritten()-pages) / float64(b.N)
	b.ReportMetric(per, "pages/item")
	b.ReportMetric(per*float64(size)/1024, "KiB/item")
}

// cpuTime is the process's CPU time so far, user and system: the syncs'
// cost is the kernel's.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
