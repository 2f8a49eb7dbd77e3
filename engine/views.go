package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// inputStatus is the one function that computes an input's status (DESIGN.md
// §7.5); the CLI and the TUI both see it through Inputs.
func inputStatus(in *storage.Input, f *storage.InputFacts, now time.Time, staleAfter time.Duration) (status string, stale bool) {
	switch {
	case in.SkippedAt != nil:
		return api.InputSkipped, false
	case f.Waiting > 0:
		return api.InputNeedsAttention, false
	}
	for _, m := range f.Outputs {
		switch m.Status {
		case MutationAwaitingApproval, MutationNeedsReconcile, MutationIndeterminate:
			return api.InputNeedsAttention, false
		}
	}
	if f.Open > 0 || f.Events == 0 {
		return api.InputPending, now.Sub(in.CreatedAt) > staleAfter
	}
	return api.InputDone, false
}

func pageLimit(n int) int {
	if n <= 0 {
		return 100
	}
	return min(n, 1000)
}

// Inputs implements API: a page of inputs (from either end), newest first, with their status
// and outputs, computed from three indexed queries for the whole page.
func (e *Engine) Inputs(ctx context.Context, workflow string, page api.Page) ([]api.InputView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	q := e.db.Read()
	var ins []*storage.Input
	if page.FromOldest() {
		ins, err = q.InputsAfter(ctx, w.ID, page.After, page.Before, pageLimit(page.Limit), page.Filter)
	} else {
		ins, err = q.Inputs(ctx, w.ID, page.Before, pageLimit(page.Limit), page.Filter)
	}
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(ins))
	for i, in := range ins {
		ids[i] = in.ID
	}
	facts, err := q.InputFacts(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := e.now()
	out := make([]api.InputView, 0, len(ins))
	for _, in := range ins {
		f := facts[in.ID]
		status, stale := inputStatus(in, f, now, e.pol.StaleAfter)
		v := api.InputView{InputID: idString(in.ID), Workflow: w.Name, Source: in.Source, Type: in.Type, ExternalID: in.ExternalID,
			Title: in.Title, Status: status, Stale: stale, CreatedAt: in.CreatedAt, Outputs: e.outputsOf(f.Outputs)}
		out = append(out, v)
	}
	return out, nil
}

// workflowState derives what the user sees from the user's status and the
// engine's block (DESIGN.md §7.1).
func (e *Engine) workflowState(w *storage.Workflow, mutation MutationStatus) string {
	switch {
	case w.Status == WorkflowArchived:
		return api.StateStopped
	case w.Status == WorkflowPaused:
		return api.StatePaused
	case needsUser(w, mutation):
		return api.StateNeedsAttention
	case e.state(w.ID).isRunning():
		return api.StateRunning
	}
	return api.StateIdle
}

func (e *Engine) workflowView(ctx context.Context, w *storage.Workflow, attention map[string]int) (api.WorkflowView, error) {
	q := e.db.Read()
	mutation, err := blockingMutation(ctx, q, w)
	if err != nil {
		return api.WorkflowView{}, err
	}
	v := api.WorkflowView{ID: idString(w.ID), Name: w.Name, Status: w.Status, State: e.workflowState(w, mutation), Version: w.Version,
		Attention: attention[w.Name]}
	if w.BlockKind != BlockNone {
		v.Block = &api.Block{Kind: w.BlockKind, Reason: w.BlockReason, N: w.BlockSeq}
	}
	n, err := q.PendingInputCount(ctx, w.ID)
	if err != nil {
		return v, err
	}
	v.PendingInputs = n
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		// this row says so; every other workflow is listed as ever
		v.State, v.LoadError, v.Schedule = api.StateNeedsAttention, err.Error(), "does not load: "+err.Error()
		return v, nil
	}
	scheds, err := q.Schedules(ctx, w.ID)
	if err != nil {
		return v, err
	}
	unwatched := e.watching().unwatched(w.ID)
	var words []string
	for _, p := range sc.Workflow.Producers {
		u, ok := unwatched[p.Name]
		words = append(words, scheduleWords(p.Schedule, ok))
		if ok {
			v.Unwatched = append(v.Unwatched, u)
		}
	}
	v.Schedule = strings.Join(words, "; ")
	for _, s := range scheds {
		v.NextRun = earliest(v.NextRun, s.NextRunAt)
		v.NextRun = earliest(v.NextRun, s.WakeAt)
	}
	return v, nil
}

// attentionCounts counts what waits for the user, per workflow name.
func (e *Engine) attentionCounts(ctx context.Context) (map[string]int, error) {
	att, err := e.Attention(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, a := range att {
		counts[a.Workflow]++
	}
	return counts, nil
}

// Workflows implements API.
func (e *Engine) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := e.attentionCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.WorkflowView, 0, len(wfs))
	for _, w := range wfs {
		v, err := e.workflowView(ctx, w, counts)
		if err != nil {
			return nil, fmt.Errorf("workflow %s: %w", w.Name, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Workflow implements API.
func (e *Engine) Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error) {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return nil, err
	}
	counts, err := e.attentionCounts(ctx)
	if err != nil {
		return nil, err
	}
	v, err := e.workflowView(ctx, w, counts)
	if err != nil {
		return nil, err
	}
	d := &api.WorkflowDetail{WorkflowView: v, Counts: api.Counts{Outputs: map[string]api.OutputCounters{}}}
	q := e.db.Read()
	// a script that no longer loads names no handlers (v says why it does
	// not load); the rest is shown as ever: it is when the person most
	// needs to look
	if sc, err := e.script(ctx, w.ID, w.Version); err == nil {
		scheds, err := q.Schedules(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		byName := map[string]storage.Schedule{}
		for _, s := range scheds {
			byName[s.Handler] = s
		}
		unwatched := e.watching().unwatched(w.ID)
		for _, p := range sc.Workflow.Producers {
			_, off := unwatched[p.Name]
			d.Handlers = append(d.Handlers, api.HandlerView{Name: p.Name, Type: "producer", Schedule: scheduleWords(p.Schedule, off),
				NextRunAt: byName[p.Name].NextRunAt, Topics: p.Publishes})
		}
		for _, c := range sc.Workflow.Consumers {
			d.Handlers = append(d.Handlers, api.HandlerView{Name: c.Name, Type: "consumer", WakeAt: byName[c.Name].WakeAt, Topics: c.Subscribe})
		}
	}
	// counted from triggers' totals and what is open, never the history
	ic, err := q.InputCounts(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	d.Counts.InputsPending, d.Counts.InputsDone, d.Counts.InputsSkipped, d.Counts.InputsNeedsAttention =
		ic.Pending, ic.Done, ic.Skipped, ic.NeedsAttention
	oc, err := q.MutationCounts(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	for conn, byStatus := range oc {
		c := api.OutputCounters{}
		for s, n := range byStatus {
			switch MutationStatus(s) {
			case MutationApplied:
				c.Applied += n
			case MutationFailed:
				c.Failed += n
			case MutationAwaitingApproval, MutationApproved, MutationInFlight, MutationNeedsReconcile, MutationIndeterminate:
				c.Waiting += n
			}
		}
		d.Counts.Outputs[conn] = c
	}
	if err := e.countOutcomes(ctx, q, w.ID, d.Counts.Outputs); err != nil {
		return nil, err
	}
	if r, err := q.LastRun(ctx, w.ID); err == nil {
		rv := runView(w.Name, r)
		d.LastRun = &rv
	}
	answers, err := q.Answers(ctx, "workflow", w.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range answers {
		d.Answers = append(d.Answers, api.AnswerView{Answer: a.Answer, AnsweredBy: a.AnsweredBy, At: a.CreatedAt, Block: int64(a.Attempt)})
	}
	return d, nil
}

func runView(workflow string, r *storage.Run) api.RunView {
	return api.RunView{ID: idString(r.ID), Workflow: workflow, Handler: r.Handler, HandlerType: r.HandlerType, Phase: r.Phase,
		Status: shownRunStatus(r), RetryOf: idString(r.RetryOf), Trigger: r.Trigger, MovedBy: r.MovedBy, Error: r.Error, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Runs implements API.
func (e *Engine) Runs(ctx context.Context, workflow string, page api.Page) ([]api.RunView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	var runs []*storage.Run
	if page.FromOldest() {
		runs, err = e.db.Read().RunsAfter(ctx, w.ID, page.After, page.Before, pageLimit(page.Limit), page.Filter)
	} else {
		runs, err = e.db.Read().Runs(ctx, w.ID, page.Before, pageLimit(page.Limit), page.Filter)
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.RunView, len(runs))
	for i, r := range runs {
		out[i] = runView(w.Name, r)
		out[i].WorkflowBlock = standingBlock(w) // what a retry from the row answers
	}
	return out, nil
}

// Events implements API.
func (e *Engine) Events(ctx context.Context, workflow string, f api.EventFilter) ([]api.EventView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	if f.Topic != "" {
		// a topic the workflow never had is a mistake, not an empty list
		topics, err := e.db.Read().Topics(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(topics, f.Topic) {
			has := "it has none"
			if len(topics) > 0 {
				has = "its topics: " + strings.Join(topics, ", ")
			}
			return nil, notFoundf("workflow %s has no topic %q (%s)", w.Name, f.Topic, has)
		}
	}
	evs, err := e.db.Read().Events(ctx, w.ID, f.Topic, f.Status, f.Before, pageLimit(f.Limit))
	if err != nil {
		return nil, err
	}
	out := make([]api.EventView, len(evs))
	for i, ev := range evs {
		causes := make([]string, len(ev.CausedBy))
		for j, c := range ev.CausedBy {
			causes[j] = idString(c)
		}
		out[i] = api.EventView{ID: idString(ev.ID), Topic: ev.Topic, MessageID: ev.MessageID, Status: ev.Status, Payload: ev.Payload,
			CausedBy: causes, ReservedBy: idString(ev.ReservedBy), CreatedBy: idString(ev.CreatedBy), CreatedAt: ev.CreatedAt}
	}
	return out, nil
}

func (e *Engine) mutationView(workflow string, m *storage.Mutation) api.MutationView {
	return api.MutationView{ID: idString(m.ID), RunID: idString(m.RunID), Workflow: workflow, Connector: m.Connector, Method: m.Method,
		Params: m.Params, Preview: e.previewOf(m), Target: e.targetOf(m), Arguments: api.Arguments(m.Params, api.ArgumentRoom),
		Status: m.Status, Result: m.Result, Error: m.Error, UITitle: m.UITitle,
		ResolvedBy: m.ResolvedBy, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// Mutations implements API.
func (e *Engine) Mutations(ctx context.Context, workflow, status string) ([]api.MutationView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	ms, err := e.db.Read().Mutations(ctx, w.ID, status)
	if err != nil {
		return nil, err
	}
	answers, err := e.db.Read().AnswersOfWorkflow(ctx, w.ID, "mutation")
	if err != nil {
		return nil, err
	}
	of := map[int64][]api.AnswerView{}
	for _, a := range answers {
		of[a.SubjectID] = append(of[a.SubjectID], mutationAnswer(a))
	}
	out := make([]api.MutationView, len(ms))
	for i, m := range ms {
		out[i] = e.mutationView(w.Name, m)
		out[i].Answers = of[m.ID]
		if out[i].Answers == nil {
			out[i].Answers = []api.AnswerView{}
		}
	}
	return out, nil
}

// Trace implements API.
func (e *Engine) Trace(ctx context.Context, runID string) ([]api.TraceLine, error) {
	id, err := parseID("run", runID)
	if err != nil {
		return nil, err
	}
	if _, err := e.db.Read().RunByID(ctx, id); errors.Is(err, storage.ErrNotFound) {
		return nil, notFoundf("no run %s", runID)
	}
	entries, err := e.db.Read().Trace(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]api.TraceLine, len(entries))
	for i, t := range entries {
		out[i] = api.TraceLine{At: t.At, Phase: t.Phase, Kind: t.Kind, Connector: t.Connector, Method: t.Method, Args: t.Args,
			Result: t.Result, DurationMS: t.DurationMS, Error: t.Error}
	}
	return out, nil
}

// RunOf is the run whose trace `keep logs WORKFLOW [--run ID]` shows,
// found through a (the engine here, or the daemon's): the workflow's newest
// run, or its run runID. It is looked up among the workflow's own runs, so a
// run of another workflow, or of none, is never shown as this one's.
func RunOf(ctx context.Context, a api.API, workflow, runID string) (*api.RunView, error) {
	page := api.Page{Limit: 1}
	if runID != "" {
		id, err := parseID("run", runID)
		if err != nil {
			return nil, err
		}
		page.Before = id + 1 // the newest at or before it: itself, if it is the workflow's
	}
	runs, err := a.Runs(ctx, workflow, page)
	switch {
	case err != nil:
		return nil, err
	case runID != "" && (len(runs) == 0 || runs[0].ID != runID):
		return nil, notFoundf("workflow %s has no run %s (keep runs %s lists its runs)", workflow, runID, workflow)
	case len(runs) == 0:
		return nil, fmt.Errorf("workflow %s has no runs yet", workflow)
	}
	return &runs[0], nil
}

// Grants implements API: the workflow's grants, each marked with whether
// the current script uses it.
func (e *Engine) Grants(ctx context.Context, workflow string) ([]api.GrantView, error) {
	w, err := e.workflowByName(ctx, workflow)
	if err != nil {
		return nil, err
	}
	gs, err := e.db.Read().Grants(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	if sc, err := e.script(ctx, w.ID, w.Version); err == nil {
		for _, c := range sc.Capabilities {
			used[c] = true
		}
	}
	out := make([]api.GrantView, len(gs))
	for i, g := range gs {
		out[i] = api.GrantView{Capability: g.Capability, Scope: g.Scope, Mode: g.Mode, DailyLimit: g.DailyLimit, Used: used[g.Capability]}
	}
	return out, nil
}

// Attention implements API: everything waiting for the user, oldest first.
func (e *Engine) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	q := e.db.Read()
	wfs, err := q.Workflows(ctx)
	if err != nil {
		return nil, err
	}
	names := map[int64]*storage.Workflow{}
	for _, w := range wfs {
		names[w.ID] = w
	}
	var out []api.AttentionItem
	covered := map[int64]bool{} // workflows whose block an item already explains
	open, err := q.OpenMutations(ctx)
	if err != nil {
		return nil, err
	}
	answered, err := openAnswers(ctx, q, open)
	if err != nil {
		return nil, err
	}
	// one read of a workflow's grants, however many of its calls ask
	grants := map[int64][]storage.Grant{}
	grantsOf := func(w *storage.Workflow) ([]storage.Grant, error) {
		if g, ok := grants[w.ID]; ok {
			return g, nil
		}
		g, err := q.Grants(ctx, w.ID)
		if err == nil {
			grants[w.ID] = g
		}
		return g, err
	}
	for _, m := range open {
		w := names[m.WorkflowID]
		item := api.AttentionItem{Workflow: w.Name, ID: idString(m.ID), Title: titleOr(m), Connector: m.Connector, Method: m.Method,
			Params: m.Params, Preview: e.previewOf(m), Target: e.targetOf(m), Arguments: api.Arguments(m.Params, api.ArgumentRoom),
			Reason: m.Error, Attempt: attempts(m), Answered: answered[m.ID], CreatedAt: m.CreatedAt}
		switch m.Status {
		case MutationAwaitingApproval:
			item.Kind = api.AttentionApproval
			item.Reason = e.approvalReason(ctx, w, m, grantsOf)
			item.Scope = e.alwaysScope(w, m, grantsOf)
			item.Answers = []string{"approve", "approve-always", "reject"}
		case MutationNeedsReconcile, MutationIndeterminate:
			item.Kind = api.AttentionReconciliation
			item.Answers = []string{string(api.TryAgain), string(api.Happened), string(api.NotHappened), string(api.SkipIt)}
			item.Check = e.checkText(m)
			if m.Status == MutationNeedsReconcile {
				item.Reason = "keep is checking whether it happened (" + m.Error + "); you may answer now"
				if w.Status != WorkflowActive {
					// nothing checks a paused workflow's calls: the person
					// is the one owner until they resume it
					item.Reason = "keep will check whether it happened once " + w.Name + " is resumed (" + m.Error + "); you may answer now"
				}
			}
		default:
			continue
		}
		if run, err := ledger.Carrier(ctx, q, m); err == nil {
			item.Inputs, _ = q.InputTitles(ctx, run.ID)
		}
		covered[m.WorkflowID] = true
		out = append(out, item)
	}
	runs, err := q.AllOpenRuns(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.Status != RunFailedLogic && r.Status != RunFailedInternal {
			continue
		}
		w := names[r.WorkflowID]
		item := api.AttentionItem{Kind: api.AttentionFailedRun, Workflow: w.Name, ID: idString(r.ID),
			Title: failedTitle(r), Reason: r.Error, Params: json.RawMessage("null"),
			Answers: []string{"retry"}, CreatedAt: r.UpdatedAt, Block: standingBlock(w)}
		item.Inputs, _ = q.InputTitles(ctx, r.ID)
		covered[r.WorkflowID] = true
		out = append(out, item)
	}
	for _, w := range wfs {
		if covered[w.ID] {
			continue
		}
		mutation, err := blockingMutation(ctx, q, w)
		if err != nil {
			return nil, err
		}
		if !needsUser(w, mutation) {
			continue
		}
		if w.BlockKind == BlockAuth {
			out = append(out, authItem(w))
			continue
		}
		kind := api.AttentionBlockedWorkflow
		if w.BlockKind == BlockPermission {
			kind = api.AttentionPermission
		}
		out = append(out, api.AttentionItem{Kind: kind, Workflow: w.Name, ID: w.Name, Title: w.Name + " is blocked",
			Reason: w.BlockReason, Params: json.RawMessage("null"), Answers: []string{"retry", "resume"}, CreatedAt: blockedSince(w), Block: w.BlockSeq})
	}
	stale, err := q.StaleInputs(ctx, e.now().Add(-e.pol.StaleAfter), 100)
	if err != nil {
		return nil, err
	}
	for _, in := range stale {
		out = append(out, api.AttentionItem{Kind: api.AttentionStaleInput, Workflow: names[in.WorkflowID].Name, ID: idString(in.ID),
			Title: in.Title, Reason: "pending since " + in.CreatedAt.Local().Format(time.RFC3339), Params: json.RawMessage("null"),
			Answers: []string{"skip-input"}, CreatedAt: in.CreatedAt})
	}
	out = append(out, e.mcpAttention()...)
	props, err := e.proposalItems(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, props...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	if out == nil {
		out = []api.AttentionItem{}
	}
	return out, nil
}

func (e *Engine) checkText(m *storage.Mutation) string {
	c, meth, err := e.reg.Lookup(m.Connector, m.Method)
	if err != nil {
		return ""
	}
	_, canCheck := c.(connectors.Reconciler)
	text := ""
	if meth.Check != nil {
		text = meth.Check(paramsOf(m))
	}
	if !canCheck {
		text = strings.TrimSpace("keep cannot check this by itself. " + text)
	}
	return text
}

// failedTitle says what a failed run was doing: a producer has no phases.
func failedTitle(r *storage.Run) string {
	if r.HandlerType == "producer" {
		return "producer " + r.Handler + " failed"
	}
	return fmt.Sprintf("%s failed while %s", r.Handler, phaseWords(r.Phase))
}

func phaseWords(phase Phase) string {
	switch phase {
	case PhasePreparing, PhasePrepared:
		return string(PhasePreparing)
	case PhaseMutating:
		return "making its change"
	case PhaseMutated, PhaseEmitting:
		return "finishing after its change"
	}
	return string(phase)
}

// alwaysScope is what "always" on m's card allows from now on: the grants
// tApprove would store (alwaysGrants), so the card never promises a part
// a deny of the person's keeps; those are named as staying denied.
func (e *Engine) alwaysScope(w *storage.Workflow, m *storage.Mutation, grantsOf func(*storage.Workflow) ([]storage.Grant, error)) string {
	_, spec, err := e.reg.Lookup(m.Connector, m.Method)
	if err != nil {
		return ""
	}
	scope := scopeOf(spec, paramsOf(m))
	grants, err := grantsOf(w)
	if err != nil {
		return connectors.ShownScope(scope, spec.ScopeKind)
	}
	add, denied := alwaysGrants(grants, w.ID, m.Connector+"."+m.Method, scope, spec.ScopeKind, false)
	var allowed []string
	for _, g := range add {
		allowed = append(allowed, connectors.ShownScope(g.Scope, spec.ScopeKind))
	}
	shown := strings.Join(allowed, " and ")
	if len(denied) > 0 {
		if shown == "" {
			shown = "nothing more"
		}
		shown += " (" + strings.Join(denied, " and ") + " stays denied)"
	}
	return shown
}

// approvalReason is why m asks the person: what the grants say of it now.
// The workflow's block carries the reason given when it asked only while
// m's run holds the block; a concurrent consumer's run asking meanwhile
// queues behind another run's block (engine/ledger/blockqueue.go), and
// the block's reason then is the other run's, or an error's.
func (e *Engine) approvalReason(ctx context.Context, w *storage.Workflow, m *storage.Mutation, grantsOf func(*storage.Workflow) ([]storage.Grant, error)) string {
	_, spec, err := e.reg.Lookup(m.Connector, m.Method)
	var grants []storage.Grant
	if err == nil {
		grants, err = grantsOf(w)
	}
	if err == nil {
		var params map[string]any
		_ = json.Unmarshal(m.Params, &params)
		mode, reason, err := e.decideWith(ctx, e.db.Read(), w, grants, m.Connector+"."+m.Method, scopeOf(spec, params))
		if err == nil && mode != GrantAllow && reason != "" {
			return reason
		}
	}
	if w.BlockKind == BlockApproval && w.BlockRunID == m.RunID {
		return strings.TrimPrefix(w.BlockReason, "waiting for approval: ")
	}
	return ""
}
