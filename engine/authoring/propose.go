package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"keep/engine"
	"keep/engine/api"
	"keep/sandbox"
	"keep/storage"
)

// A proposal is a script someone other than the person offers for a
// workflow: a repair (origin "repair"), a model through `keep mcp serve`
// ("mcp"), or `keep edit --propose` ("edit"). Here it is made: validated,
// summarised against the deployed version, diffed and dry-run with its
// reads captured; the engine files it (Engine.FileProposal) and the person
// decides it. A repair that would widen what the workflow touches is
// refused outright and only recorded.

// Propose implements API.
func (a Author) Propose(ctx context.Context, p api.ProposalRequest) (*api.ProposalView, error) {
	return a.propose(ctx, p, 0)
}

// propose validates, summarises and dry-runs p and files it; runID is
// the failed run a repair was made for.
func (a Author) propose(ctx context.Context, p api.ProposalRequest, runID int64) (*api.ProposalView, error) {
	e := a.E
	switch p.Origin {
	case api.OriginRepair, api.OriginMCP, api.OriginEdit:
	default:
		return nil, fmt.Errorf("propose: origin %q is not one of repair, mcp, edit", p.Origin)
	}
	if p.FileName == "" {
		p.FileName = "proposal.js"
	}
	sc, err := e.Validate(p.FileName, p.Source)
	if err != nil {
		return nil, fmt.Errorf("propose: the script does not validate: %w", err)
	}
	name := p.Workflow
	if name == "" {
		name = sc.Workflow.Name
	} else if err := sandbox.CheckWorkflowName(name); err != nil {
		return nil, refusedf("propose: %v", err)
	}
	// bounded before anything costly (the dry run): the script and reason
	// alone may not pass the byte cap, nor may the workflow's open proposals
	// the count cap (checked again where the proposal is filed)
	if err := e.ProposalRoom(ctx, name, len(p.Source)+len(p.Reason)); err != nil {
		return nil, err
	}
	row := storage.Proposal{WorkflowName: name, Origin: p.Origin, Reason: p.Reason, FileName: p.FileName,
		Source: string(p.Source), RunID: runID, CreatedAt: e.Now()}
	var base *sandbox.Script
	var grants []api.GrantView
	before := ""
	d, err := e.Deployed(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case d == nil:
		if p.Origin == api.OriginRepair {
			return nil, notFoundf("no workflow %q to repair", name)
		}
	default:
		if !keepsName(sc, d.Script, name) {
			return nil, refusedf("the proposed script is named %q, not %q: a proposal may not rename a workflow", sc.Workflow.Name, name)
		}
		base = d.Script
		if grants, err = e.Grants(ctx, name); err != nil {
			return nil, err
		}
		row.WorkflowID, row.BaseVersion, before = d.WorkflowID, d.Version, d.Source
		if p.FileName == "proposal.js" {
			row.FileName = d.FileName
		}
	}
	sum := summarize(base, sc, grants)
	row.Diff = udiff.Unified("a/"+row.FileName, "b/"+row.FileName, before, string(p.Source))
	row.Summary, _ = json.Marshal(sum)

	why := ""
	if p.Origin == api.OriginRepair && len(sum.Widens) > 0 {
		why = "a repair may not add " + strings.Join(sum.Widens, ", ")
	}
	var dry *api.TryReport
	dryErr := ""
	if why == "" {
		// Nothing of a proposal is performed before it is accepted, its
		// reads included: a repair with the deployed version's calls may
		// still read another file, or send what it read elsewhere.
		opts := api.TryOptions{CaptureReads: true}
		if d != nil {
			dry, err = a.TryChange(ctx, name, row.FileName, p.Source, opts)
		} else {
			dry, err = Try(ctx, e.Registry(), e.Policy(), row.FileName, p.Source, opts)
		}
		if err != nil {
			dryErr = err.Error()
		}
	}
	return e.FileProposal(ctx, row, dry, dryErr, why)
}

// keepsName says whether next, a new version of the workflow name whose
// deployed script is cur, keeps its name: the workflow's, or the one cur
// declares (a workflow deployed with --name keeps its file's name in every
// version).
func keepsName(next, cur *sandbox.Script, name string) bool {
	return next.Workflow.Name == name || cur != nil && next.Workflow.Name == cur.Workflow.Name
}

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{engine.ErrRefused}, args...)...)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{engine.ErrNotFound}, args...)...)
}
