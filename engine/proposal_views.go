package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"keep/engine/api"
	"keep/engine/reference"
	"keep/storage"
)

// Proposals as the person reads them: their ids, their views, the
// attention items they make and their text.

// proposalDryRun is the stored dry run of a proposal.
type proposalDryRun struct {
	Report *api.TryReport `json:"report"`
	Error  string         `json:"error,omitempty"`
}

func proposalID(id int64) string { return "p" + strconv.FormatInt(id, 10) }

// parseProposalID takes "p12" (or "12").
func parseProposalID(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "p"), 10, 64)
	if err != nil || n <= 0 {
		return 0, notFoundf("%q is not a proposal id (they look like p12)", s)
	}
	return n, nil
}

// IsProposalID says whether s names a proposal ("p12") rather than a mutation.
func IsProposalID(s string) bool {
	_, err := strconv.ParseUint(strings.TrimPrefix(s, "p"), 10, 63)
	return strings.HasPrefix(s, "p") && err == nil
}

func proposalView(p *storage.Proposal) *api.ProposalView {
	v := &api.ProposalView{ID: proposalID(p.ID), Workflow: p.WorkflowName, Origin: p.Origin, Reason: p.Reason, FileName: p.FileName,
		BaseVersion: p.BaseVersion, Source: p.Source, Diff: p.Diff, Status: api.ProposalOpen, Why: p.Why, Version: p.Version,
		CreatedAt: p.CreatedAt, DecidedAt: p.DecidedAt}
	if p.Decision != "" {
		v.Status = p.Decision
	}
	_ = json.Unmarshal(p.Summary, &v.Summary)
	var dry proposalDryRun
	_ = json.Unmarshal(p.DryRun, &dry)
	v.DryRun, v.DryRunError = dry.Report, dry.Error
	return v
}

// Proposals lists a workflow's proposals, decided or not, oldest first
// ("" : every open one).
func (e *Engine) Proposals(ctx context.Context, workflow string) ([]api.ProposalView, error) {
	var rows []*storage.Proposal
	var err error
	if workflow == "" {
		rows, err = e.db.Read().OpenProposals(ctx)
	} else {
		rows, err = e.db.Read().Proposals(ctx, workflow)
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.ProposalView, 0, len(rows))
	for _, p := range rows {
		out = append(out, *proposalView(p))
	}
	return out, nil
}

// proposalItems are the open proposals as attention items: the preview
// holds what the person reads before answering.
func (e *Engine) proposalItems(ctx context.Context) ([]api.AttentionItem, error) {
	open, err := e.Proposals(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []api.AttentionItem
	for _, p := range open {
		sum, _ := json.Marshal(p.Summary)
		out = append(out, api.AttentionItem{Kind: api.AttentionProposal, Workflow: p.Workflow, ID: p.ID,
			Title:  fmt.Sprintf("new version of %s proposed by %s", p.Workflow, originWords(p.Origin)),
			Reason: p.Reason, Params: sum, Preview: ProposalText(&p), Inputs: []string{},
			Answers: []string{"accept", "reject"}, CreatedAt: p.CreatedAt})
	}
	return out, nil
}

func originWords(origin string) string {
	switch origin {
	case api.OriginRepair:
		return "the repairer"
	case api.OriginMCP:
		return "a model over MCP"
	}
	return "keep edit"
}

// ProposalText is a proposal in words: what it adds, the dry run, the diff.
func ProposalText(p *api.ProposalView) string {
	var b strings.Builder
	s := p.Summary
	list := func(label string, xs []string) {
		if len(xs) == 0 {
			xs = []string{"none"}
		}
		fmt.Fprintf(&b, "%s: %s\n", label, strings.Join(xs, ", "))
	}
	list("adds", s.Adds)
	list("reads", s.Reads)
	list("hosts", s.Hosts)
	list("handlers", s.Handlers)
	list("schedules", s.Schedules)
	list("mutations", s.Mutations)
	list("not granted (each would ask you)", s.Grants)
	list("grants it would use", s.UsesGrants)
	switch {
	case p.DryRun != nil:
		r := p.DryRun
		fmt.Fprintf(&b, "dry run (reads and mutations captured, nothing changed): %d runs, %d reads, %d mutations\n",
			len(r.Runs), len(r.Reads), len(r.Mutations))
		for _, m := range r.Mutations {
			fmt.Fprintf(&b, "  would %s.%s %s\n", m.Connector, m.Method, clip(m.Preview, 120))
		}
		for _, run := range r.Runs {
			if run.Error != "" {
				fmt.Fprintf(&b, "  run %s %s: %s\n", run.Handler, run.Status, clip(run.Error, 160))
			}
		}
	case p.DryRunError != "":
		fmt.Fprintf(&b, "dry run failed: %s\n", p.DryRunError)
	}
	// no blank line in the words (a run's error may hold one): the first
	// is where the diff starts (SplitProposalText)
	head := b.String()
	for strings.Contains(head, "\n\n") {
		head = strings.ReplaceAll(head, "\n\n", "\n")
	}
	return reference.EscapeShown(head + "\n" + p.Diff)
}

// SplitProposalText parts ProposalText's text into its words (what it
// adds, the dry run) and its diff: a listing shows the words, and `keep
// attention ID` both.
func SplitProposalText(text string) (words, diff string) {
	words, diff, _ = strings.Cut(text, "\n\n")
	return words + "\n", diff
}
