package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// historyWorkflow declares the topic the history lives in; it is deployed
// and never run.
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

const (
	historyChunk   = 10_000 // rows per write transaction while building
	historyPending = 100    // pending events on top of the history
	historyCalls   = 200    // timed calls of each query
	peekLimit      = 100
	inputsLimit    = 50
)

// buildHistory writes, through the ledger, a workflow whose topic holds
// `consumed` consumed events followed by historyPending pending ones, each
// caused by its own input and each consumed one reserved and consumed by
// its own committed run: the rows a long-lived workflow leaves behind.
func buildHistory(ctx context.Context, k *keepEngine, wfID int64, consumed int) error {
	now := time.Now()
	led := ledger.New(ledger.Opts{Now: func() time.Time { return now }, KeyPrefix: "bench"})
	payload := json.RawMessage(`{"n":0}`)
	next := int64(1)
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
		if _, err := led.MoveRun(ctx, tx, nil, run, ledger.ByScheduler, ""); err != nil {
			return err
		}
		runID := run.ID
		if err := tx.Reserve(ctx, wfID, runID, []int64{evID}, now); err != nil {
			return err
		}
		return led.ConsumeEvents(ctx, tx, runID, storage.EventConsumed, now)
	}
	for done := 0; done < consumed; done += historyChunk {
		n := min(historyChunk, consumed-done)
		if err := k.db.Write(ctx, func(tx *storage.Tx) error {
			for range n {
				if err := add(tx, true); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return k.db.Write(ctx, func(tx *storage.Tx) error {
		for range historyPending {
			if err := add(tx, false); err != nil {
				return err
			}
		}
		return nil
	})
}

// history times peek (a page of 100 pending events) and the inputs page
// (the first 50 inputs with their status facts and outputs) over each
// history size, each on its own database.
func history(ctx context.Context, o Options, r *Results) error {
	for _, size := range o.HistorySizes {
		dir := filepath.Join(o.Dir, sizeKey(size))
		if err := historyAt(ctx, dir, size, o, r); err != nil {
			return fmt.Errorf("history of %d: %w", size, err)
		}
		os.RemoveAll(dir)
	}
	return nil
}

// newHistory is an engine on a fresh database with the history workflow
// deployed (never run: its rows are written through storage).
func newHistory(ctx context.Context, dir string) (*keepEngine, *storage.Workflow, error) {
	k, err := newEngine(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	if err := k.deploy(ctx, "history", historyWorkflow); err != nil {
		k.close()
		return nil, nil, err
	}
	w, err := k.db.Read().WorkflowByName(ctx, "history")
	if err != nil {
		k.close()
		return nil, nil, err
	}
	return k, w, nil
}

func historyAt(ctx context.Context, dir string, size int, o Options, r *Results) error {
	k, w, err := newHistory(ctx, dir)
	if err != nil {
		return err
	}
	defer k.close()
	start := time.Now()
	if err := buildHistory(ctx, k, w.ID, size); err != nil {
		return err
	}
	build := time.Since(start)
	r.HistoryBuildS[sizeKey(size)] = build.Seconds()

	q := k.db.Read()
	peek := func() error {
		evs, err := q.Peek(ctx, w.ID, "item", peekLimit)
		if err == nil && (len(evs) != historyPending || evs[0].Status != "pending") {
			err = fmt.Errorf("peek = %d events, want %d pending", len(evs), historyPending)
		}
		return err
	}
	page := func() error {
		ins, err := k.e.Inputs(ctx, "history", api.Page{Limit: inputsLimit})
		if err == nil && (len(ins) != inputsLimit || ins[0].Status == api.InputDone || ins[inputsLimit-1].Status == api.InputDone) {
			err = fmt.Errorf("inputs page = %d inputs, want %d still open", len(ins), inputsLimit)
		}
		return err
	}
	peekMS, err := timeCalls(peek)
	if err != nil {
		return err
	}
	pageMS, err := timeCalls(page)
	if err != nil {
		return err
	}
	if err := views(ctx, k, size, r); err != nil {
		return err
	}
	r.PeekMS[sizeKey(size)] = peekMS
	r.InputsPageMS[sizeKey(size)] = pageMS
	o.Logf("history of %d consumed + %d pending built in %s; peek %.3f ms, inputs page %.3f ms",
		size, historyPending, build.Round(time.Millisecond), peekMS, pageMS)
	return nil
}

// timeCalls warms a query up, then returns its mean over historyCalls calls
// in milliseconds.
func timeCalls(call func() error) (float64, error) {
	for range 10 {
		if err := call(); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	for range historyCalls {
		if err := call(); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000 / historyCalls, nil
}
