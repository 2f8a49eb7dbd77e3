package engine

import (
	"context"

	"keep/storage"
)

// Repairer turns a logic failure into a new script (DESIGN.md §7.2).
type Repairer interface {
	Repair(ctx context.Context, req RepairRequest) (newSource string, err error)
}

// RepairRequest is what a repairer is given.
type RepairRequest struct {
	Workflow string   `json:"workflow"`
	FileName string   `json:"file_name"`
	Script   string   `json:"script"`
	Error    string   `json:"error"`
	Handler  string   `json:"handler"`
	Phase    string   `json:"phase"`
	Trace    []string `json:"trace"`
}

// maybeRepair hands a logic failure to the repairer, within its budget.
// Without a repairer the failure stays escalated to the user (the block
// set by the failure says so).
func (e *Engine) maybeRepair(ctx context.Context, w *storage.Workflow, run *storage.Run) {
	if e.repair == nil {
		return
	}
	e.log.Info("repair requested", "workflow", w.Name, "run", run.ID)
}
