package engine

import (
	"context"
	"errors"
	"time"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// What engine/authoring takes of the run loop, beside the API: the
// connectors and policy a dry run copies, the clock, a deployed version to
// build a proposal on, the few writes a dry run makes on its own
// throw-away engine, the grant rule its report applies, and a file's
// checks. Three more stand with their concern: Backup (retention.go, a dry
// run's snapshot), ProposalRoom (proposal_bounds.go) and FileProposal
// (proposal.go). Authoring stands above the engine and reaches it only
// here; the engine reaches authoring only through the Repairer it is given
// (engine.go, repair.go).

// Registry is the connectors the engine calls.
func (e *Engine) Registry() *connectors.Registry { return e.reg }

// Policy is the policy the engine runs on.
func (e *Engine) Policy() Policy { return e.pol }

// Now is the engine's clock.
func (e *Engine) Now() time.Time { return e.now() }

// DeployedVersion is a workflow's deployed version as a proposal builds on it.
type DeployedVersion struct {
	WorkflowID       int64
	Version          int
	FileName, Source string
	// Script is the version compiled and held to its stored manifest.
	Script *sandbox.Script
}

// Deployed reads name's deployed version; nil when no workflow has that name.
func (e *Engine) Deployed(ctx context.Context, name string) (*DeployedVersion, error) {
	w, err := e.db.Read().WorkflowByName(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cur, err := e.db.Read().ScriptVersion(ctx, w.ID, w.Version)
	if err != nil {
		return nil, err
	}
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return nil, err
	}
	return &DeployedVersion{WorkflowID: w.ID, Version: w.Version, FileName: cur.FileName, Source: cur.Source, Script: sc}, nil
}

// DueNow makes the producers of a dry run's workflow due now: only, when
// producer is given, that one.
func (e *Engine) DueNow(ctx context.Context, workflow string, sc *sandbox.Script, producer string) error {
	now := e.now()
	return e.db.Write(ctx, func(tx *storage.Tx) error {
		w, err := tx.WorkflowByName(ctx, workflow)
		if err != nil {
			return err
		}
		for _, p := range sc.Workflow.Producers {
			at := &now
			if producer != "" && p.Name != producer {
				at = nil
			}
			if err := tx.SetNextRun(ctx, w.ID, p.Name, at); err != nil {
				return err
			}
		}
		return nil
	})
}

// CallsToday counts, for each grant with a daily limit, the workflow's
// calls in the last day it covers (callsToday), keyed by api.LimitKey: what
// a dry run of the deployed workflow starts its limits from.
func (e *Engine) CallsToday(ctx context.Context, workflow string, grants []api.GrantView) (map[string]int, error) {
	var today map[string]int
	var w *storage.Workflow
	for _, g := range grants {
		if g.DailyLimit == 0 {
			continue
		}
		if w == nil {
			var err error
			if w, err = e.db.Read().WorkflowByName(ctx, workflow); err != nil {
				return nil, err
			}
		}
		n, err := e.callsToday(ctx, e.db.Read(), w.ID, g.Capability, g.Scope)
		if err != nil {
			return nil, err
		}
		if today == nil {
			today = map[string]int{}
		}
		today[api.LimitKey(g.Capability, g.Scope)] = n
	}
	return today, nil
}

// GrantModeOf is decide's rule (ledger.DecideGrant) on a dry run's grants,
// with today (by api.LimitKey) the calls each daily limit has counted before
// this one.
func GrantModeOf(grants []api.GrantView, capability, scope string, kind connectors.ScopeKind, today map[string]int) (mode storage.GrantMode, reason string) {
	rows := make([]storage.Grant, len(grants))
	for i, g := range grants {
		rows[i] = storage.Grant{Capability: g.Capability, Scope: g.Scope, Mode: g.Mode, DailyLimit: g.DailyLimit}
	}
	v, _ := ledger.DecideGrant(rows, capability, scope, kind, func(g *storage.Grant) (int, error) {
		return today[api.LimitKey(g.Capability, g.Scope)], nil
	})
	if v.Mode != GrantAllow {
		return v.Mode, "waits for your approval: " + v.Why
	}
	return v.Mode, ""
}

// Validate runs the static checks of `keep validate` with this engine's
// connectors and policy, without touching the database.
func (e *Engine) Validate(fileName string, src []byte) (*sandbox.Script, error) {
	awaitMCP(context.Background(), e.reg, src)
	return sandbox.Load(fileName, src, e.loadOptions())
}
