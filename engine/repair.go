package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"

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

// repairTraceLines is how much of the failing run's trace a repairer sees.
const repairTraceLines = 40

// maybeRepair hands a logic failure to the repairer, within its budget of
// repairs in a row; past it, or without a repairer, the failure stays with
// the user (the block set by the failure says so). What the repairer
// answers is only a proposal: the workflow stays blocked on the failed run
// until the person accepts it (proposal.go) or answers the run.
// triggerRepair is the trigger of a run retried after a repair, and the
// origin of the script version the repair made.
const triggerRepair = "repair"

func (e *Engine) maybeRepair(ctx context.Context, w *storage.Workflow, run *storage.Run) {
	if e.repair == nil {
		return
	}
	fresh, err := e.db.Read().WorkflowByID(ctx, w.ID)
	if err != nil || fresh.BlockKind != BlockRepair || fresh.BlockRunID != run.ID {
		return
	}
	w = fresh
	if w.Repairs >= e.pol.Repairs {
		e.repairFailed(ctx, w, fmt.Sprintf("%d repairs in a row did not fix it", w.Repairs))
		return
	}
	if err := e.repairRun(ctx, w, run); err != nil {
		e.log.Warn("repair failed", "workflow", w.Name, "run", run.ID, "err", err)
		e.repairFailed(ctx, w, "repair failed: "+err.Error())
	}
}

func (e *Engine) repairFailed(ctx context.Context, w *storage.Workflow, why string) {
	if err := e.tRepairFailed(ctx, w, why); err != nil {
		e.log.Error("recording a failed repair", "workflow", w.Name, "err", err)
	}
	e.notify(NoteNeedsAttention, w.Name, w.Name+": "+why)
}

func (e *Engine) repairRun(ctx context.Context, w *storage.Workflow, run *storage.Run) error {
	q := e.db.Read()
	cur, err := q.ScriptVersion(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	entries, err := q.Trace(ctx, run.ID)
	if err != nil {
		return err
	}
	req := RepairRequest{Workflow: w.Name, FileName: cur.FileName, Script: cur.Source, Error: run.Error,
		Handler: run.Handler, Phase: phaseOfFailure(run, entries)}
	for _, t := range entries[max(0, len(entries)-repairTraceLines):] {
		req.Trace = append(req.Trace, traceText(t))
	}
	rctx, cancel := context.WithTimeout(ctx, e.pol.HandlerTimeout)
	defer cancel()
	src, err := e.repair.Repair(rctx, req)
	if err != nil {
		return err
	}
	view, err := e.propose(ctx, ProposalRequest{Workflow: w.Name, FileName: cur.FileName, Source: []byte(src), Origin: OriginRepair,
		Reason: fmt.Sprintf("a repair of run %s (%s %s: %s)", idString(run.ID), run.Handler, req.Phase, clip(run.Error, 200))}, run.ID)
	if err != nil {
		return err
	}
	if view.Status == ProposalRefused {
		e.repairFailed(ctx, w, "a repair was refused: "+view.Why)
		return nil
	}
	e.repairFailed(ctx, w, fmt.Sprintf("a repair is proposed: keep approve %s, or keep reject %s", view.ID, view.ID))
	return nil
}

// phaseOfFailure names the handler phase that failed, from the trace's last
// entry (the failure note) or the run's phase.
func phaseOfFailure(run *storage.Run, entries []storage.TraceEntry) string {
	if n := len(entries); n > 0 && entries[n-1].Phase != "" {
		return entries[n-1].Phase
	}
	if run.HandlerType == "producer" {
		return "producer"
	}
	return string(run.Phase)
}

func traceText(t storage.TraceEntry) string {
	switch t.Kind {
	case "call":
		s := fmt.Sprintf("[%s] %s.%s(%s) → %s", t.Phase, t.Connector, t.Method, t.Args, t.Result)
		if t.Error != "" {
			s += " error: " + t.Error
		}
		return s
	case "log":
		return fmt.Sprintf("[%s] console.%s: %s", t.Phase, t.Method, t.Result)
	}
	return fmt.Sprintf("[%s] %s", t.Phase, t.Result)
}

// CommandRepairer runs a command (through sh -c) with the RepairRequest as
// JSON on stdin; what it writes on stdout is the new script.
type CommandRepairer struct{ Command string }

func (r CommandRepairer) Repair(ctx context.Context, req RepairRequest) (string, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", r.Command)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("repair command: %w: %s", err, clip(strings.TrimSpace(errOut.String()), 300))
	}
	if strings.TrimSpace(out.String()) == "" {
		return "", errors.New("repair command wrote no script")
	}
	return out.String(), nil
}

// EndpointRepairer asks a chat-completions endpoint for the new script.
type EndpointRepairer struct {
	URL    string
	Model  string
	APIKey string
	Client *http.Client
}

const repairPrompt = `You repair keep workflow scripts (JavaScript, export default Keep.workflow({...})). ` +
	`You get the script, the error, the failing handler and phase, and the end of its trace. ` +
	`Answer with the complete corrected script only, no explanation. Keep its name, topics and handlers; ` +
	`do not add calls to connectors the script did not use, hosts, handlers or topics, and do not make a schedule faster.\n\n` + dataRule

func (r EndpointRepairer) Repair(ctx context.Context, req RepairRequest) (string, error) {
	chat := &Chat{URL: r.URL, Model: r.Model, APIKey: r.APIKey, Client: r.Client}
	answer, err := chat.Complete(ctx, []ChatMessage{{Role: "system", Content: repairPrompt}, {Role: "user", Content: repairMessage(req)}})
	if err != nil {
		return "", fmt.Errorf("repair: %w", err)
	}
	return stripFence(answer), nil
}

// stripFence removes a Markdown code fence around a model's answer.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSpace(s), "```")
}
