package benchmark

import (
	"context"
	"fmt"

	"keep/engine/api"
)

// views times, over a history of size consumed inputs, every view a person
// opens: keep status, keep workflows, keep attention, and the first and
// last pages of the inputs and runs panes (g and G in the TUI: G is one
// Oldest page). Each must cost what it shows, not the history.
func views(ctx context.Context, k *keepEngine, size int, r *Results) error {
	key := sizeKey(size)
	calls := []struct {
		into map[string]float64
		call func() error
	}{
		{r.StatusMS, func() error {
			d, err := k.e.Workflow(ctx, "history")
			if err == nil && d.Counts.InputsDone != size {
				err = fmt.Errorf("status counts %d done inputs, want %d", d.Counts.InputsDone, size)
			}
			return err
		}},
		{r.WorkflowsMS, func() error {
			wfs, err := k.e.Workflows(ctx)
			if err == nil && (len(wfs) != 1 || wfs[0].PendingInputs != historyPending) {
				err = fmt.Errorf("workflows = %+v, want one with %d pending inputs", wfs, historyPending)
			}
			return err
		}},
		{r.AttentionMS, func() error { _, err := k.e.Attention(ctx); return err }},
		{r.InputsLastPageMS, func() error {
			ins, err := k.e.Inputs(ctx, "history", api.Page{Oldest: true, Limit: inputsLimit})
			if err == nil && (len(ins) != inputsLimit || ins[0].Status != api.InputDone) {
				err = fmt.Errorf("oldest inputs page = %d inputs, want %d done", len(ins), inputsLimit)
			}
			return err
		}},
		{r.RunsPageMS, func() error {
			runs, err := k.e.Runs(ctx, "history", api.Page{Limit: inputsLimit})
			if err == nil && len(runs) != inputsLimit {
				err = fmt.Errorf("runs page = %d runs, want %d", len(runs), inputsLimit)
			}
			return err
		}},
		{r.RunsLastPageMS, func() error {
			runs, err := k.e.Runs(ctx, "history", api.Page{Oldest: true, Limit: inputsLimit})
			if err == nil && len(runs) != inputsLimit {
				err = fmt.Errorf("oldest runs page = %d runs, want %d", len(runs), inputsLimit)
			}
			return err
		}},
	}
	for _, c := range calls {
		v, err := timeCalls(c.call)
		if err != nil {
			return err
		}
		c.into[key] = v
	}
	return nil
}
