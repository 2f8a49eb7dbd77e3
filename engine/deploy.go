package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"keep/engine/api"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// Deploy validates a script and stores it as the workflow's new version. A
// new workflow starts active. Topics and events are kept as they are;
// consumers are marked dirty; producers without a schedule yet are due now.
func (e *Engine) Deploy(ctx context.Context, fileName string, src []byte, name string) (*api.DeployResult, error) {
	return e.deploy(ctx, fileName, src, name, nil)
}

// deploy is Deploy; accepting, if set, is the proposal the deploy accepts
// (AcceptProposal): in the deploy's own transaction it is checked against
// the workflow (proposalFits) and decided, so a deploy that lands first
// makes the accept refused, never overwritten.
func (e *Engine) deploy(ctx context.Context, fileName string, src []byte, name string, accepting *storage.Proposal) (*api.DeployResult, error) {
	sc, err := e.Validate(fileName, src)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = sc.Workflow.Name
	} else if err := sandbox.CheckWorkflowName(name); err != nil {
		return nil, refusedf("deploy --name: %v", err)
	}
	decl, _ := json.Marshal(sc.Workflow)
	res := &api.DeployResult{Workflow: name}
	var wfID int64
	var fresh []string // producers the deploy makes due now
	write := func(tx *storage.Tx, now time.Time) error {
		fresh = fresh[:0]
		w, err := tx.WorkflowByName(ctx, name)
		if errors.Is(err, storage.ErrNotFound) {
			w, res.Created = &storage.Workflow{Name: name}, true
		} else if err != nil {
			return err
		}
		if accepting != nil {
			if err := proposalFits(accepting, w, res.Created); err != nil {
				return err
			}
		}
		if !res.Created && w.Status == WorkflowActive {
			// the same file deployed again is not a new version
			cur, err := tx.ScriptVersion(ctx, w.ID, w.Version)
			if err == nil && cur.Source == string(src) && cur.FileName == fileName {
				res.Version, res.Unchanged, wfID = w.Version, true, w.ID
				return nil
			}
		}
		if err := e.moveWorkflow(ctx, tx, w, ledger.WDeploy); err != nil {
			return err
		}
		wfID = w.ID
		v, err := tx.LatestScriptVersion(ctx, w.ID)
		if err != nil {
			return err
		}
		res.Version = v + 1
		if err := tx.AddScriptVersion(ctx, storage.ScriptVersion{WorkflowID: w.ID, Version: res.Version, Label: itoa(res.Version),
			Origin: "deploy", FileName: fileName, Source: string(src), Declaration: decl, Manifest: sc.Manifest.JSON(), CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.SetWorkflowVersion(ctx, w.ID, res.Version, now); err != nil {
			return err
		}
		var accepted int64
		if accepting != nil {
			accepted = accepting.ID
		}
		if err := e.supersedeProposals(ctx, tx, name, res.Version, accepted); err != nil {
			return err
		}
		for _, t := range sc.Workflow.Topics {
			if err := tx.EnsureTopic(ctx, w.ID, t); err != nil {
				return err
			}
		}
		scheds, err := tx.Schedules(ctx, w.ID)
		if err != nil {
			return err
		}
		have := map[string]storage.Schedule{}
		for _, s := range scheds {
			have[s.Handler] = s
		}
		for _, p := range sc.Workflow.Producers {
			if err := tx.EnsureSchedule(ctx, w.ID, p.Name, "producer"); err != nil {
				return err
			}
			next := now
			fresh = append(fresh, p.Name)
			if old, ok := have[p.Name]; ok && old.NextRunAt != nil {
				fresh = fresh[:len(fresh)-1] // it keeps its schedule
				// recomputed under the new schedule, never later than it was
				next = p.Schedule.Next(now)
				if old.NextRunAt.Before(next) {
					next = *old.NextRunAt
				}
			}
			if err := tx.SetNextRun(ctx, w.ID, p.Name, &next); err != nil {
				return err
			}
		}
		for _, c := range sc.Workflow.Consumers {
			if err := tx.EnsureSchedule(ctx, w.ID, c.Name, "consumer"); err != nil {
				return err
			}
			if err := tx.MarkUnrun(ctx, w.ID, c.Name); err != nil {
				return err
			}
		}
		// a handler the script no longer has runs no more: its next run
		// and wakeAt are nobody's, and shown they would stay, weeks on,
		// the time it was last due (added again, it starts afresh)
		for _, s := range scheds {
			if s.NextRunAt == nil && s.WakeAt == nil {
				continue
			}
			if slices.ContainsFunc(sc.Workflow.Producers, func(p sandbox.Producer) bool { return p.Name == s.Handler }) ||
				slices.ContainsFunc(sc.Workflow.Consumers, func(c sandbox.Consumer) bool { return c.Name == s.Handler }) {
				continue
			}
			if err := tx.ClearSchedule(ctx, w.ID, s.Handler); err != nil {
				return err
			}
		}
		if accepting != nil && e.pol.DefaultMutationMode == GrantAllow {
			// what a model proposed is allowed nothing by being accepted:
			// its summary told the person each new capability would ask
			// (ask and deny rows hold it back as a deploy's do)
			return nil
		}
		for _, cap := range sc.Capabilities {
			if err := tx.EnsureGrant(ctx, storage.Grant{WorkflowID: w.ID, Capability: cap, Mode: e.pol.DefaultMutationMode}, now); err != nil {
				return err
			}
		}
		return nil
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		now := e.now()
		if err := write(tx, now); err != nil {
			return err
		}
		if accepting == nil {
			return nil
		}
		return tx.DecideProposal(ctx, accepting.ID, api.ProposalAccepted, "user", "", res.Version, now)
	})
	if err != nil {
		return nil, err
	}
	if res.Unchanged {
		if res.Capabilities, err = e.Grants(ctx, name); err != nil {
			return nil, err
		}
		return res, nil
	}
	e.mu.Lock()
	e.scripts[scriptKey{wfID, res.Version}] = sc
	started := e.started
	e.mu.Unlock()
	ws := e.state(wfID)
	for _, c := range sc.Workflow.Consumers {
		ws.markDirty(c.Name)
		ws.madeDue("deploy", c.Name)
	}
	ws.madeDue("deploy", fresh...)
	if res.Created && started {
		e.launch(wfID)
	}
	ws.poke()
	grants, err := e.Grants(ctx, name)
	if err != nil {
		return nil, err
	}
	res.Capabilities, res.Manifest = grants, sc.Manifest
	e.notify(api.NoteChanged, name, "deployed version "+itoa(res.Version))
	return res, nil
}

// Script implements API.
func (e *Engine) Script(ctx context.Context, workflow string) (*api.ScriptView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	sv, err := e.db.Read().ScriptVersion(ctx, w.ID, w.Version)
	if err != nil {
		return nil, err
	}
	return &api.ScriptView{Workflow: w.Name, Version: sv.Label, FileName: sv.FileName, Source: sv.Source}, nil
}
