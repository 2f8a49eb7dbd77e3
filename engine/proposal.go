package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"keep/engine/config"
	"keep/engine/reference"
	"keep/sandbox"
	"keep/storage"
)

// A proposal is a script someone other than the person offers for a
// workflow: a repair (origin "repair"), a model through `keep mcp serve`
// ("mcp"), or `keep edit --propose` ("edit"). It never deploys by itself:
// it waits in Attention with its diff, a summary of what it adds and a dry
// run, and the workflow keeps its version and state until the person
// accepts it. A repair that would widen what the workflow touches is
// refused outright and only recorded.

// proposalDryRun is the stored dry run of a proposal.
type proposalDryRun struct {
	Report *TryReport `json:"report"`
	Error  string     `json:"error,omitempty"`
}

// Propose implements API.
func (e *Engine) Propose(ctx context.Context, p ProposalRequest) (*ProposalView, error) {
	return e.propose(ctx, p, 0)
}

// propose validates, summarises and dry-runs p and appends it; runID is
// the failed run a repair was made for.
func (e *Engine) propose(ctx context.Context, p ProposalRequest, runID int64) (*ProposalView, error) {
	switch p.Origin {
	case OriginRepair, OriginMCP, OriginEdit:
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
	// the count cap (checked again where the proposal is written)
	if n := len(p.Source) + len(p.Reason); n > e.maxProposalBytes() {
		return nil, refusedf("propose: the proposal is %d bytes, over policy.max_proposal_bytes (%d)", n, e.maxProposalBytes())
	}
	if err := e.roomForProposal(ctx, e.db.Read(), name); err != nil {
		return nil, err
	}
	row := storage.Proposal{WorkflowName: name, Origin: p.Origin, Reason: p.Reason, FileName: p.FileName,
		Source: string(p.Source), RunID: runID, CreatedAt: e.now()}
	var base *sandbox.Script
	var grants []GrantView
	before := ""
	w, err := e.db.Read().WorkflowByName(ctx, name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if p.Origin == OriginRepair {
			return nil, notFoundf("no workflow %q to repair", name)
		}
	case err != nil:
		return nil, err
	default:
		if sc.Workflow.Name != name {
			return nil, refusedf("the proposed script is named %q, not %q: a proposal may not rename a workflow", sc.Workflow.Name, name)
		}
		cur, err := e.db.Read().ScriptVersion(ctx, w.ID, w.Version)
		if err != nil {
			return nil, err
		}
		if base, err = e.script(ctx, w.ID, w.Version); err != nil {
			return nil, err
		}
		if grants, err = e.Grants(ctx, name); err != nil {
			return nil, err
		}
		row.WorkflowID, row.BaseVersion, before = w.ID, w.Version, cur.Source
		if p.FileName == "proposal.js" {
			row.FileName = cur.FileName
		}
	}
	sum := summarize(base, sc, grants)
	row.Diff = udiff.Unified("a/"+row.FileName, "b/"+row.FileName, before, string(p.Source))
	row.Summary, _ = json.Marshal(sum)

	refused := p.Origin == OriginRepair && len(sum.Widens) > 0
	dry := proposalDryRun{}
	if !refused {
		// Nothing of a proposal is performed before it is accepted, its
		// reads included: a repair with the deployed version's calls may
		// still read another file, or send what it read elsewhere.
		opts := TryOptions{CaptureReads: true}
		if w != nil {
			dry.Report, err = e.TryChange(ctx, name, row.FileName, p.Source, opts)
		} else {
			dry.Report, err = Try(ctx, e.reg, e.pol, row.FileName, p.Source, opts)
		}
		if err != nil {
			dry.Error = err.Error()
		}
	}
	row.DryRun, _ = json.Marshal(dry)
	why := ""
	if refused {
		why = "a repair may not add " + strings.Join(sum.Widens, ", ")
	}
	if n := proposalBytes(&row); n > e.maxProposalBytes() {
		return nil, refusedf("propose: the proposal with its diff and dry run is %d bytes, over policy.max_proposal_bytes (%d)",
			n, e.maxProposalBytes())
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		if !refused {
			if err := e.roomForProposal(ctx, tx.Q, name); err != nil {
				return err
			}
		}
		id, err := tx.AddProposal(ctx, row)
		if err != nil {
			return err
		}
		row.ID = id
		if refused {
			return tx.DecideProposal(ctx, id, ProposalRefused, "keep", why, 0, row.CreatedAt)
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
	if refused {
		e.log.Warn("a repair was refused", "workflow", name, "proposal", row.ID, "why", why)
		e.notify(NoteChanged, name, name+": "+why)
	} else {
		e.notify(NoteNeedsAttention, name, fmt.Sprintf("%s: a new version is proposed (%s): keep approve %s", name, p.Origin, proposalID(row.ID)))
	}
	return proposalView(stored), nil
}

func proposalID(id int64) string { return "p" + strconv.FormatInt(id, 10) }

// Proposals are bounded (policy.max_open_proposals, max_proposal_bytes):
// an assistant filed 1,000 in four minutes, and ten of 1 MB grew the
// database by 20 MB. A workflow has at most so many waiting, each at most
// so large; a proposal made against a version that is no longer the
// workflow's (one was accepted, or a version deployed) is closed.

func (e *Engine) maxOpenProposals() int {
	if e.pol.MaxOpenProposals > 0 {
		return e.pol.MaxOpenProposals
	}
	return config.Default().Policy.MaxOpenProposals
}

func (e *Engine) maxProposalBytes() int {
	if e.pol.MaxProposalBytes > 0 {
		return e.pol.MaxProposalBytes
	}
	return config.Default().Policy.MaxProposalBytes
}

// proposalBytes is what p stores.
func proposalBytes(p *storage.Proposal) int {
	return len(p.Source) + len(p.Reason) + len(p.Diff) + len(p.Summary) + len(p.DryRun) + len(p.FileName)
}

// roomForProposal refuses a proposal for a workflow whose open proposals
// are at the cap.
func (e *Engine) roomForProposal(ctx context.Context, q storage.Q, name string) error {
	n, err := q.OpenProposalCount(ctx, name)
	if err != nil {
		return err
	}
	if n >= e.maxOpenProposals() {
		return refusedf("propose: %s has %d proposals waiting, as many as policy.max_open_proposals allows: "+
			"accept or reject one first (keep attention)", name, n)
	}
	return nil
}

// supersedeProposals closes name's open proposals made against a version
// older than version (now its version), but the one being accepted, if
// any: each would replace what is no longer there, and AcceptProposal
// refuses it anyway. Closed is rejected by keep, saying why.
func (e *Engine) supersedeProposals(ctx context.Context, tx *storage.Tx, name string, version int, accepting int64) error {
	ids, err := tx.StaleProposals(ctx, name, version)
	if err != nil {
		return err
	}
	why := fmt.Sprintf("superseded: %s is at version %d now", name, version)
	for _, id := range ids {
		if id == accepting {
			continue
		}
		if err := tx.DecideProposal(ctx, id, ProposalRejected, "keep", why, 0, e.now()); err != nil {
			return err
		}
	}
	return nil
}

// acceptingKey carries, from AcceptProposal to Deploy, the proposal being
// accepted, so the deploy closes the others but not it.
type acceptingKey struct{}

func acceptingFrom(ctx context.Context) int64 {
	id, _ := ctx.Value(acceptingKey{}).(int64)
	return id
}

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

func proposalView(p *storage.Proposal) *ProposalView {
	v := &ProposalView{ID: proposalID(p.ID), Workflow: p.WorkflowName, Origin: p.Origin, Reason: p.Reason, FileName: p.FileName,
		BaseVersion: p.BaseVersion, Source: p.Source, Diff: p.Diff, Status: ProposalOpen, Why: p.Why, Version: p.Version,
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
func (e *Engine) AcceptProposal(ctx context.Context, id string) (*DeployResult, error) {
	e.proposalMu.Lock()
	defer e.proposalMu.Unlock()
	p, err := e.openProposal(ctx, id)
	if err != nil {
		return nil, err
	}
	w, err := e.db.Read().WorkflowByName(ctx, p.WorkflowName)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if p.WorkflowID != 0 {
			return nil, notFoundf("workflow %q is gone", p.WorkflowName)
		}
	case err != nil:
		return nil, err
	case w.Version != p.BaseVersion:
		return nil, refusedf("workflow %s is at version %d, not %d as when %s was proposed: reject it and propose again",
			w.Name, w.Version, p.BaseVersion, id)
	}
	sc, err := e.Validate(p.FileName, []byte(p.Source))
	if err != nil {
		return nil, fmt.Errorf("accept %s: the script no longer validates: %w", id, err)
	}
	if p.Origin == OriginRepair && w != nil && w.BlockKind == BlockRepair && w.BlockRunID == p.RunID {
		return e.acceptRepair(ctx, w, p, sc)
	}
	res, err := e.Deploy(context.WithValue(ctx, acceptingKey{}, p.ID), p.FileName, []byte(p.Source), p.WorkflowName)
	if err != nil {
		return nil, err
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		return tx.DecideProposal(ctx, p.ID, ProposalAccepted, "user", "", res.Version, e.now())
	})
	if err != nil {
		return nil, err
	}
	e.notify(NoteChanged, p.WorkflowName, fmt.Sprintf("%s: %s accepted as version %d", p.WorkflowName, id, res.Version))
	return res, nil
}

func (e *Engine) acceptRepair(ctx context.Context, w *storage.Workflow, p *storage.Proposal, sc *sandbox.Script) (*DeployResult, error) {
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
		if w.BlockKind != BlockRepair || w.BlockRunID != runID {
			return refusedf("workflow %s changed while %s was being accepted; try again", w.Name, proposalID(p.ID))
		}
		if err := tx.DecideProposal(ctx, p.ID, ProposalAccepted, "user", "", v.Version, v.CreatedAt); err != nil {
			return err
		}
		return e.supersedeProposals(ctx, tx, w.Name, v.Version, p.ID)
	}); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.scripts[scriptKey{w.ID, v.Version}] = sc
	e.mu.Unlock()
	ws := e.state(w.ID)
	e.markAllConsumers(ctx, ws, w)
	e.notify(NoteChanged, w.Name, fmt.Sprintf("%s repaired as version %s (%s accepted)", w.Name, v.Label, proposalID(p.ID)))
	res := &DeployResult{Workflow: w.Name, Version: v.Version, Capabilities: []GrantView{}}
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
		return tx.DecideProposal(ctx, p.ID, ProposalRejected, "user", "", 0, e.now())
	}); err != nil {
		return err
	}
	e.notify(NoteChanged, p.WorkflowName, fmt.Sprintf("%s: %s rejected", p.WorkflowName, id))
	return nil
}

// Proposals lists a workflow's proposals, decided or not, oldest first
// ("" : every open one).
func (e *Engine) Proposals(ctx context.Context, workflow string) ([]ProposalView, error) {
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
	out := make([]ProposalView, 0, len(rows))
	for _, p := range rows {
		out = append(out, *proposalView(p))
	}
	return out, nil
}

// proposalItems are the open proposals as attention items: the preview
// holds what the person reads before answering.
func (e *Engine) proposalItems(ctx context.Context) ([]AttentionItem, error) {
	open, err := e.Proposals(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []AttentionItem
	for _, p := range open {
		sum, _ := json.Marshal(p.Summary)
		out = append(out, AttentionItem{Kind: AttentionProposal, Workflow: p.Workflow, ID: p.ID,
			Title:  fmt.Sprintf("new version of %s proposed by %s", p.Workflow, originWords(p.Origin)),
			Reason: p.Reason, Params: sum, Preview: ProposalText(&p), Inputs: []string{},
			Answers: []string{"accept", "reject"}, CreatedAt: p.CreatedAt})
	}
	return out, nil
}

func originWords(origin string) string {
	switch origin {
	case OriginRepair:
		return "the repairer"
	case OriginMCP:
		return "a model over MCP"
	}
	return "keep edit"
}

// ProposalText is a proposal in words: what it adds, the dry run, the diff.
func ProposalText(p *ProposalView) string {
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
	return shownText(head + "\n" + p.Diff)
}

// SplitProposalText parts ProposalText's text into its words (what it
// adds, the dry run) and its diff: a listing shows the words, and `keep
// attention ID` both.
func SplitProposalText(text string) (words, diff string) {
	words, diff, _ = strings.Cut(text, "\n\n")
	return words + "\n", diff
}

// shownText escapes what a model's script could use to make its text look
// other than it is on a terminal: control characters (but newline and
// tab), and bidi and invisible format characters.
func shownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if reference.Escaped(r) {
			fmt.Fprintf(&b, "\\u%04X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
