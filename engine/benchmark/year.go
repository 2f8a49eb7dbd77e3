package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"keep/engine"
	"keep/engine/ledger"
	"keep/storage"
)

// YearResults are issue 17's figures: what a year of use leaves on disk
// with retention on, how fast the views stay over a long history, and the
// throughput of several workflows at once. They sit in Results' JSON beside
// the rest.
type YearResults struct {
	// YearDBMB: the database after YearDays simulated days of
	// YearInputsPerDay inputs with the default [retention] and a daily gc.
	YearDBMB float64 `json:"year_db_mb"`
	// BytesPerInput: growth per input at steady state (from day 60 on, when
	// retention has long caught up), what the ledger keeps forever.
	BytesPerInput float64 `json:"bytes_per_input"`
	YearDays      int     `json:"year_days"`
	YearInputs    int     `json:"year_inputs"`
	// YearGCMS: the longest daily gc of the year, in ms; YearGCTxMS: the
	// longest of its write transactions (a batch or a vacuum slice), what a
	// run waiting to commit may wait behind.
	YearGCMS   float64 `json:"year_gc_ms"`
	YearGCTxMS float64 `json:"year_gc_tx_ms"`

	// Views at each history size, ms per call: keep status, keep
	// workflows, keep attention, and the first and last pages of the
	// inputs and runs panes (the TUI's g and G).
	StatusMS         map[string]float64 `json:"status_ms"`
	WorkflowsMS      map[string]float64 `json:"workflows_ms"`
	AttentionMS      map[string]float64 `json:"attention_ms"`
	InputsLastPageMS map[string]float64 `json:"inputs_last_page_ms"`
	RunsPageMS       map[string]float64 `json:"runs_page_ms"`
	RunsLastPageMS   map[string]float64 `json:"runs_last_page_ms"`

	// ParallelRunsPerS: consumer runs per second, all workflows together,
	// with ParallelWorkflows pipelines running at once.
	ParallelRunsPerS  float64 `json:"parallel_runs_per_s"`
	ParallelWorkflows int     `json:"parallel_workflows"`
	ParallelRuns      int     `json:"parallel_runs"`
}

func (y *YearResults) init() {
	y.StatusMS, y.WorkflowsMS, y.AttentionMS = map[string]float64{}, map[string]float64{}, map[string]float64{}
	y.InputsLastPageMS, y.RunsPageMS, y.RunsLastPageMS = map[string]float64{}, map[string]float64{}, map[string]float64{}
}

// Row shapes of one day of a workflow that reads mail-sized items: sizes
// are what the engine writes for such a run, not the smallest possible.
const (
	pollsPerDay  = 288 // a producer every 5 minutes
	payloadBytes = 800 // an item's payload: subject, sender, a summary
	traceBytes   = 150 // one trace line's arguments and result
	// retention on: the default [retention] and, opted in, payloads of done
	// events compacted after as long as traces are kept
	yearCompactAfter = 720 * time.Hour
)

// year writes YearDays days of a workflow's history through storage — the
// same rows, in the same tables, that the engine's runs write — on a fake
// clock, with a gc at the end of each day under the default retention. A
// day has pollsPerDay producer runs (YearInputsPerDay of them register an
// input and publish it, the rest find nothing) and one consumer run per
// input with its mutation.
func year(ctx context.Context, o Options, r *Results) error {
	k, w, err := newHistory(ctx, o.Dir)
	if err != nil {
		return err
	}
	defer k.close()
	retention := engine.RetentionFrom(k.cfg.Retention)
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	payload := json.RawMessage(fmt.Sprintf(`{"subject":"Item","from":"someone@example.com","summary":%q}`,
		strings.Repeat("lorem ipsum ", payloadBytes/12)))
	filler := strings.Repeat("x", traceBytes)
	nextInput := int64(1)
	var steadyBytes int64
	steadyInputs := 0
	for d := range o.YearDays {
		now := day0.Add(time.Duration(d) * 24 * time.Hour)
		if err := k.db.Write(ctx, func(tx *storage.Tx) error {
			for p := range pollsPerDay {
				at := now.Add(time.Duration(p) * 5 * time.Minute)
				if err := yearPoll(ctx, tx, w.ID, at, p < o.YearInputsPerDay, &nextInput, payload, filler); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("day %d: %w", d, err)
		}
		end := now.Add(24 * time.Hour)
		gcStart := time.Now()
		rep, err := k.db.GC(ctx, storage.Retention{TracesBefore: end.Add(-retention.Traces), RunsBefore: end.Add(-retention.Runs),
			CompactBefore: end.Add(-yearCompactAfter)})
		if err != nil {
			return fmt.Errorf("day %d: %w", d, err)
		}
		r.YearGCMS = max(r.YearGCMS, float64(time.Since(gcStart).Microseconds())/1000)
		r.YearGCTxMS = max(r.YearGCTxMS, rep.LongestTxMS)
		if d == 59 {
			steadyBytes, steadyInputs = rep.BytesAfter, int(nextInput-1)
		}
		if d == o.YearDays-1 {
			r.YearDBMB = float64(rep.BytesAfter) / (1 << 20)
			if inputs := int(nextInput-1) - steadyInputs; d >= 59 && inputs > 0 {
				r.BytesPerInput = float64(rep.BytesAfter-steadyBytes) / float64(inputs)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	r.YearDays, r.YearInputs = o.YearDays, int(nextInput-1)
	o.Logf("a year of %d inputs: %.1f MB, %.0f bytes per input at steady state, longest daily gc %.0f ms, longest gc transaction %.1f ms",
		r.YearInputs, r.YearDBMB, r.BytesPerInput, r.YearGCMS, r.YearGCTxMS)
	return nil
}

// yearPoll writes one producer run at at and, when it found an item, the
// input, its event and the consumer run that handled it.
func yearPoll(ctx context.Context, tx *storage.Tx, wfID int64, at time.Time, found bool, nextInput *int64,
	payload json.RawMessage, filler string) error {
	closed := at
	prod := &storage.Run{WorkflowID: wfID, Handler: "poll", HandlerType: "producer", ScriptVersion: 1, Trigger: "schedule",
		Phase: "committed", Status: "committed", ClosedAt: &closed, CreatedAt: at, UpdatedAt: at}
	// the rows go in through the ledger, as the engine's would, stamped at
	// the simulated time
	led := ledger.New(ledger.Opts{Now: func() time.Time { return at }, KeyPrefix: "bench"})
	if _, err := led.MoveRun(ctx, tx, nil, prod, ledger.ByScheduler, ""); err != nil {
		return err
	}
	prodID := prod.ID
	if err := tx.AddTrace(ctx, []storage.TraceEntry{
		{RunID: prodID, At: at, Phase: "produce", Kind: "call", Connector: "mail", Method: "search", Args: filler, Result: filler, DurationMS: 40},
		{RunID: prodID, At: at, Phase: "produce", Kind: "log", Result: "checked the inbox"},
	}); err != nil {
		return err
	}
	if !found {
		return nil
	}
	id := *nextInput
	*nextInput++
	ext := fmt.Sprintf("msg-%d@example.com", id)
	if err := tx.InsertInput(ctx, &storage.Input{ID: id, WorkflowID: wfID, Source: "mail", Type: "message", ExternalID: ext,
		Title: "Mail " + ext, CreatedBy: prodID, CreatedAt: at}); err != nil {
		return err
	}
	evID, err := tx.PublishEvent(ctx, wfID, "item", ext, payload, prodID, []int64{id}, at)
	if err != nil {
		return err
	}
	cons := &storage.Run{WorkflowID: wfID, Handler: "record", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
		Phase: "committed", Status: "committed", ClosedAt: &closed, CreatedAt: at, UpdatedAt: at,
		PrepareResult: json.RawMessage(`{"reservations":[{"topic":"item","ids":["` + ext + `"]}],"data":` + string(payload) + `}`)}
	if _, err := led.MoveRun(ctx, tx, nil, cons, ledger.ByScheduler, ""); err != nil {
		return err
	}
	consID := cons.ID
	if err := tx.Reserve(ctx, wfID, consID, []int64{evID}, at); err != nil {
		return err
	}
	m := &storage.Mutation{RunID: consID, WorkflowID: wfID, Connector: "sheets", Method: "appendRow",
		Params:  json.RawMessage(`{"sheet":"log.csv","row":["` + ext + `","Item","someone@example.com"]}`),
		Preview: "Add a row to log.csv", UITitle: "Log " + ext, Attempts: 1, CreatedAt: at, UpdatedAt: at}
	wf := &storage.Workflow{ID: wfID, Name: "year"}
	if _, err := led.MoveMutation(ctx, tx, wf, m, ledger.MSend, ""); err != nil {
		return err
	}
	m.Result = json.RawMessage(`{"row":` + fmt.Sprint(id) + `}`)
	if _, err := led.MoveMutation(ctx, tx, wf, m, ledger.MApplied, "host"); err != nil {
		return err
	}
	cons.MutationID = m.ID
	cons.MutationResult = m.Result
	if _, err := led.MoveRun(ctx, tx, nil, cons, ledger.ByScheduler, ""); err != nil {
		return err
	}
	if err := tx.AddTrace(ctx, []storage.TraceEntry{
		{RunID: consID, At: at, Phase: "prepare", Kind: "call", Connector: "mail", Method: "get", Args: filler, Result: filler, DurationMS: 30},
		{RunID: consID, At: at, Phase: "mutate", Kind: "call", Connector: "sheets", Method: "appendRow", Args: filler, Result: filler, DurationMS: 20},
		{RunID: consID, At: at, Phase: "next", Kind: "log", Result: "logged " + ext},
	}); err != nil {
		return err
	}
	return led.ConsumeEvents(ctx, tx, consID, storage.EventConsumed, at)
}

// viewTargetMS is what any view may cost at the largest history.
const viewTargetMS = 50

// yearRows adds issue 17's figures to the table.
func (r *Results) yearRows(row func(name, value, target string, met *bool)) {
	b := func(v bool) *bool { return &v }
	sizes := r.Options.HistorySizes
	for _, v := range []struct {
		name string
		m    map[string]float64
	}{{"status_ms", r.StatusMS}, {"workflows_ms", r.WorkflowsMS}, {"attention_ms", r.AttentionMS},
		{"inputs_last_page_ms", r.InputsLastPageMS}, {"runs_page_ms", r.RunsPageMS}, {"runs_last_page_ms", r.RunsLastPageMS}} {
		for _, n := range sizes {
			ms, ok := v.m[sizeKey(n)]
			if !ok {
				continue
			}
			row(fmt.Sprintf("%s[%s]", v.name, sizeKey(n)), f2(ms), fmt.Sprintf("< %d", viewTargetMS), b(ms < viewTargetMS))
		}
	}
	if r.ParallelWorkflows > 0 {
		row("parallel_runs_per_s", f1(r.ParallelRunsPerS), fmt.Sprintf("(%d workflows at once, %d consumer runs)", r.ParallelWorkflows, r.ParallelRuns), nil)
	}
	if r.YearDays > 0 {
		row("year_db_mb", f1(r.YearDBMB), fmt.Sprintf("< 50 (%d days, %d inputs, default retention, payloads compacted after 30 days)", r.YearDays, r.YearInputs), b(r.YearDBMB < 50))
		row("bytes_per_input", fmt.Sprintf("%.0f", r.BytesPerInput), "(steady state, kept for good)", nil)
		row("year_gc_ms", f1(r.YearGCMS), "(longest daily gc)", nil)
		row("year_gc_tx_ms", f1(r.YearGCTxMS), "(longest gc write transaction: a batch or a vacuum slice)", nil)
	}
}
