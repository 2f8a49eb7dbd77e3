package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"keep/engine/api"
	"keep/sandbox"
	"keep/storage"
)

// A proposal is a script someone other than the person offers for a
// workflow: a repair (origin "repair"), a model through `keep mcp serve`
// ("mcp"), or `keep edit --propose` ("edit"). engine/authoring makes it
// (validates, summarises, diffs and dry-runs it); here it is filed, and
// decided by the person: it never deploys by itself, and the workflow
// keeps its version and state until the person accepts it. A repair that
// would widen what the workflow touches is refused outright and only
// recorded.

// FileProposal stores a proposal engine/authoring made (validated,
// summarised, diffed and dry-run) and tells the person; refused, the
// reason a repair may not be proposed, stores it decided. The bounds are
// checked again here, where it is written: the proposal with its dry run
// may not pass policy.max_proposal_bytes, nor the workflow's open
// proposals policy.max_open_proposals.
func (e *Engine) FileProposal(ctx context.Context, row storage.Proposal, dry *api.TryReport, dryErr, refused string) (*api.ProposalView, error) {
	row.DryRun, _ = json.Marshal(proposalDryRun{Report: dry, Error: dryErr})
	if n := proposalBytes(&row); n > e.maxProposalBytes() {
		return nil, refusedf("propose: the proposal with its diff and dry run is %d bytes, over policy.max_proposal_bytes (%d)",
			n, e.maxProposalBytes())
	}
	name := row.WorkflowName
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		if refused == "" {
			if err := e.roomForProposal(ctx, tx.Q, name); err != nil {
				return err
			}
		}
		id, err := tx.AddProposal(ctx, row)
		if err != nil {
			return err
		}
		row.ID = id
		if refused != "" {
			return tx.DecideProposal(ctx, id, api.ProposalRefused, "keep", refused, 0, row.CreatedAt)
		}
		return nil
	})
	if errors.Is(err, ErrRefused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("propose: %w", err)
	}
	stored, err := e.db.Read().Proposal(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	if refused != "" {
		e.log.Warn("a repair was refused", "workflow", name, "proposal", row.ID, "why", refused)
		e.notify(api.NoteChanged, name, name+": "+refused)
	} else {
		e.notify(api.NoteNeedsAttention, name, fmt.Sprintf("%s: a new version is proposed (%s): keep approve %s", name, row.Origin, proposalID(row.ID)))
	}
	return proposalView(stored), nil
}

// proposal reads one proposal by its id, undecided.
func (e *Engine) openProposal(ctx context.Context, id string) (*storage.Proposal, error) {
	n, err := parseProposalID(id)
	if err != nil {
		return nil, err
	}
	p, err := e.db.Read().Proposal(ctx, n)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFoundf("no proposal %s", id)
	}
	if err != nil {
		return nil, err
	}
	if p.Decision != "" && p.Why != "" {
		return nil, refusedf("proposal %s was %s already (%s)", id, p.Decision, p.Why)
	}
	if p.Decision != "" {
		return nil, refusedf("proposal %s was %s already", id, p.Decision)
	}
	return p, nil
}

// AcceptProposal implements API: the proposal becomes the workflow's new
// version. A repair accepted while its workflow still waits on the failed
// run is a minor version and retries that run (DESIGN.md §7.2); anything
// else is a deploy. Accepting adds no grant.
func (e *Engine) AcceptProposal(ctx context.Context, id string) (*api.DeployResult, error) {
	e.proposalMu.Lock()
	defer e.proposalMu.Unlock()
	p, err := e.openProposal(ctx, id)
	if err != nil {
		return nil, err
	}
	// which way it is accepted; whether it still may be is checked in the
	// transaction that accepts it (proposalFits), against the workflow as
	// that transaction reads it: a deploy landing in between is seen there
	w, err := e.db.Read().WorkflowByName(ctx, p.WorkflowName)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	sc, err := e.Validate(p.FileName, []byte(p.Source))
	if err != nil {
		return nil, fmt.Errorf("accept %s: the script no longer validates: %w", id, err)
	}
	if e.beforeAccept != nil {
		e.beforeAccept()
	}
	if p.Origin == api.OriginRepair && w != nil && w.BlockKind == BlockRepair && w.BlockRunID == p.RunID {
		return e.acceptRepair(ctx, w, p, sc)
	}
	res, err := e.deploy(ctx, p.FileName, []byte(p.Source), p.WorkflowName, p)
	if err != nil {
		return nil, err
	}
	e.notify(api.NoteChanged, p.WorkflowName, fmt.Sprintf("%s: %s accepted as version %d", p.WorkflowName, id, res.Version))
	return res, nil
}

// proposalFits refuses to accept p unless w, as the accepting
// transaction reads it, is still what p was made against: the same
// version (none, for a workflow p would create; fresh says there is no
// such workflow).
func proposalFits(p *storage.Proposal, w *storage.Workflow, fresh bool) error {
	if fresh && p.WorkflowID != 0 {
		return notFoundf("workflow %q is gone", p.WorkflowName)
	}
	if w.Version != p.BaseVersion {
		return refusedf("workflow %s is at version %d, not %d as when %s was proposed: reject it and propose again",
			p.WorkflowName, w.Version, p.BaseVersion, proposalID(p.ID))
	}
	return nil
}

func (e *Engine) acceptRepair(ctx context.Context, w *storage.Workflow, p *storage.Proposal, sc *sandbox.Script) (*api.DeployResult, error) {
	q := e.db.Read()
	cur, err := q.ScriptVersion(ctx, w.ID, w.Version)
	if err != nil {
		return nil, err
	}
	latest, err := q.LatestScriptVersion(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	decl, _ := json.Marshal(sc.Workflow)
	major, _, _ := strings.Cut(cur.Label, ".")
	v := storage.ScriptVersion{WorkflowID: w.ID, Version: latest + 1, Label: fmt.Sprintf("%s.%d", major, w.Repairs+1),
		Origin: triggerRepair, FileName: p.FileName, Source: p.Source, Declaration: decl, Manifest: sc.Manifest.JSON(), CreatedAt: e.now()}
	runID := w.BlockRunID
	if err := e.tRepaired(ctx, w, v, sc.Workflow.Topics, func(tx *storage.Tx) error {
		if err := proposalFits(p, w, false); err != nil {
			return err
		}
		if w.BlockKind != BlockRepair || w.BlockRunID != runID {
			return refusedf("workflow %s changed while %s was being accepted; try again", w.Name, proposalID(p.ID))
		}
		if err := tx.DecideProposal(ctx, p.ID, api.ProposalAccepted, "user", "", v.Version, v.CreatedAt); err != nil {
			return err
		}
		// the new version's script is known before its consumers are
		// marked (tRepaired, once it commits)
		tx.AfterCommit(func() {
			e.mu.Lock()
			e.scripts[scriptKey{w.ID, v.Version}] = sc
			e.mu.Unlock()
		})
		return e.supersedeProposals(ctx, tx, w.Name, v.Version, p.ID)
	}); err != nil {
		return nil, err
	}
	ws := e.state(w.ID)
	e.notify(api.NoteChanged, w.Name, fmt.Sprintf("%s repaired as version %s (%s accepted)", w.Name, v.Label, proposalID(p.ID)))
	res := &api.DeployResult{Workflow: w.Name, Version: v.Version, Capabilities: []api.GrantView{}}
	if gs, err := e.Grants(ctx, w.Name); err == nil {
		res.Capabilities = gs
	}
	return res, e.carryOn(ctx, ws)
}

// RejectProposal implements API: the proposal is dropped; the workflow
// keeps its version (a failed run it was made for still waits for you).
func (e *Engine) RejectProposal(ctx context.Context, id string) error {
	e.proposalMu.Lock()
	defer e.proposalMu.Unlock()
	p, err := e.openProposal(ctx, id)
	if err != nil {
		return err
	}
	if err := e.db.Write(ctx, func(tx *storage.Tx) error {
		return tx.DecideProposal(ctx, p.ID, api.ProposalRejected, "user", "", 0, e.now())
	}); err != nil {
		return err
	}
	e.notify(api.NoteChanged, p.WorkflowName, fmt.Sprintf("%s: %s rejected", p.WorkflowName, id))
	return nil
}
