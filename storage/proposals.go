package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Proposal is a script offered for a workflow, and the decision on it
// (Decision is "" while it waits for the person).
type Proposal struct {
	ID           int64
	WorkflowID   int64 // 0: a workflow not deployed yet
	WorkflowName string
	BaseVersion  int
	Origin       string // repair, mcp, edit
	Reason       string
	FileName     string
	Source       string
	Diff         string
	Summary      json.RawMessage
	DryRun       json.RawMessage
	RunID        int64
	CreatedAt    time.Time

	Decision  string // "", accepted, rejected, refused
	DecidedBy string
	Why       string
	Version   int // the script version an accept made
	DecidedAt *time.Time
}

const proposalCols = `p.id, p.workflow_id, p.workflow_name, p.base_version, p.origin, p.reason, p.file_name, p.source,
	p.diff, p.summary, p.dry_run, p.run_id, p.created_at, d.decision, d.decided_by, d.why, d.version, d.decided_at`

const proposalFrom = ` FROM proposals p LEFT JOIN proposal_decisions d ON d.proposal_id = p.id`

func scanProposal(row interface{ Scan(...any) error }) (*Proposal, error) {
	var p Proposal
	var wf, run, version, decidedAt sql.NullInt64
	var decision, by, why sql.NullString
	var summary, dry string
	var created int64
	if err := row.Scan(&p.ID, &wf, &p.WorkflowName, &p.BaseVersion, &p.Origin, &p.Reason, &p.FileName, &p.Source,
		&p.Diff, &summary, &dry, &run, &created, &decision, &by, &why, &version, &decidedAt); err != nil {
		return nil, notFound(err)
	}
	p.WorkflowID, p.RunID = wf.Int64, run.Int64
	p.Summary, p.DryRun = json.RawMessage(summary), json.RawMessage(dry)
	p.CreatedAt = fromMS(created)
	p.Decision, p.DecidedBy, p.Why, p.Version = decision.String, by.String, why.String, int(version.Int64)
	p.DecidedAt = fromNullMS(decidedAt)
	return &p, nil
}

// AddProposal appends a proposal and returns its id.
func (tx *Tx) AddProposal(ctx context.Context, p Proposal) (int64, error) {
	summary, dry := string(p.Summary), string(p.DryRun)
	if summary == "" {
		summary = "{}"
	}
	if dry == "" {
		dry = "null"
	}
	res, err := tx.exec(ctx, `INSERT INTO proposals(workflow_id, workflow_name, base_version, origin, reason, file_name, source,
		diff, summary, dry_run, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		nullID(p.WorkflowID), p.WorkflowName, p.BaseVersion, p.Origin, p.Reason, p.FileName, p.Source,
		p.Diff, summary, dry, nullID(p.RunID), ms(p.CreatedAt))
	if err != nil {
		return 0, fmt.Errorf("add proposal for %q: %w", p.WorkflowName, err)
	}
	return res.LastInsertId()
}

// DecideProposal records the one decision on a proposal; a proposal decided
// already is ErrConflict.
func (tx *Tx) DecideProposal(ctx context.Context, id int64, decision, by, why string, version int, at time.Time) error {
	var v any
	if version > 0 {
		v = version
	}
	_, err := tx.exec(ctx, `INSERT INTO proposal_decisions(proposal_id, decision, decided_by, why, version, decided_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, decision, by, why, v, ms(at))
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return fmt.Errorf("proposal %d is decided already: %w", id, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("decide proposal %d: %w", id, err)
	}
	return nil
}

// Proposal returns one proposal with its decision, or ErrNotFound.
func (q Q) Proposal(ctx context.Context, id int64) (*Proposal, error) {
	return scanProposal(q.q.QueryRowContext(ctx, `SELECT `+proposalCols+proposalFrom+` WHERE p.id = ?`, id))
}

// OpenProposals lists the proposals no one has decided yet, oldest first.
func (q Q) OpenProposals(ctx context.Context) ([]*Proposal, error) {
	return q.proposals(ctx, `SELECT `+proposalCols+proposalFrom+` WHERE d.proposal_id IS NULL ORDER BY p.id`)
}

// Proposals lists a workflow's proposals, decided or not, oldest first.
func (q Q) Proposals(ctx context.Context, workflowName string) ([]*Proposal, error) {
	return q.proposals(ctx, `SELECT `+proposalCols+proposalFrom+` WHERE p.workflow_name = ? ORDER BY p.id`, workflowName)
}

func (q Q) proposals(ctx context.Context, query string, args ...any) ([]*Proposal, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Proposal
	for rows.Next() {
		p, err := scanProposal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return out, nil
}

// OpenProposalCount is how many of workflowName's proposals wait for a
// decision.
func (q Q) OpenProposalCount(ctx context.Context, workflowName string) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT count(*)`+proposalFrom+` WHERE p.workflow_name = ? AND d.proposal_id IS NULL`,
		workflowName).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count open proposals of %q: %w", workflowName, err)
	}
	return n, nil
}

// StaleProposals lists the ids of workflowName's open proposals made
// against a version older than version, oldest first.
func (q Q) StaleProposals(ctx context.Context, workflowName string, version int) ([]int64, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT p.id`+proposalFrom+
		` WHERE p.workflow_name = ? AND d.proposal_id IS NULL AND p.base_version < ? ORDER BY p.id`, workflowName, version)
	if err != nil {
		return nil, fmt.Errorf("stale proposals of %q: %w", workflowName, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
