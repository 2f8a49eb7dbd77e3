package authoring

import (
	"context"
	"fmt"
	"strconv"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring/model"
)

// Repairs is the engine's Repairer (DESIGN.md §7.2): a failed run goes to
// the model's repairer, and the script it answers becomes a proposal for
// the person, never a deploy.
type Repairs struct{ Model model.Repairer }

// RepairsFrom is the Repairer of m; nil (no repair) when m is nil.
func RepairsFrom(m model.Repairer) engine.Repairer {
	if m == nil {
		return nil
	}
	return Repairs{Model: m}
}

// Repair implements engine.Repairer.
func (r Repairs) Repair(ctx context.Context, e *engine.Engine, f engine.FailedRun) (*api.ProposalView, error) {
	req := model.RepairRequest{Workflow: f.Workflow, FileName: f.FileName, Script: f.Script, Error: f.Error,
		Handler: f.Handler, Phase: f.Phase, Trace: f.Trace}
	rctx, cancel := context.WithTimeout(ctx, e.Policy().HandlerTimeout)
	defer cancel()
	src, err := r.Model.Repair(rctx, req)
	if err != nil {
		return nil, err
	}
	return Author{E: e}.propose(ctx, api.ProposalRequest{Workflow: f.Workflow, FileName: f.FileName, Source: []byte(src),
		Origin: api.OriginRepair, Reason: fmt.Sprintf("a repair of run %s (%s %s: %s)", strconv.FormatInt(f.RunID, 10), f.Handler, f.Phase,
			model.Clip(f.Error, 200))}, f.RunID)
}
