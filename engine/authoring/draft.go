package authoring

import (
	"context"
	"fmt"
	"strings"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring/model"
	"keep/engine/reference"
)

// Drafting (`keep new`, `keep edit`): a chat-completions model writes a
// workflow from the generated reference and the authoring guide; the host
// validates and dry-runs each draft and hands the problems back, a few
// rounds at most. A draft is only ever written to a file, never deployed.

// DraftRounds is how many drafts a model gets to produce a working file.
const DraftRounds = 3

// DraftRequest is what to draft: a new workflow from a description, or a
// change to an existing script.
type DraftRequest struct {
	Description string // keep new
	Current     string // keep edit: the script as it is
	Change      string // keep edit: what to change
	FileName    string // the name the draft is validated under
	Guide       string // the authoring guide (workflows/README.md)
	Try         api.TryOptions
	// Name, for keep edit, is the workflow's name: a draft that renames it
	// is handed back to the model, and never works.
	Name string
	// TryFn dry-runs a draft in place of Try: keep edit of a deployed
	// workflow starts from its events, state and grants (Engine.TryChange).
	TryFn func(ctx context.Context, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error)
}

// Draft is a drafted workflow that validated and dry-ran, or, with
// Invalid, the last draft of a model that never got there.
type Draft struct {
	Source string         `json:"source"`
	Rounds int            `json:"rounds"`
	Report *api.TryReport `json:"report"`
	// Invalid: the last round still failed; Problems says how.
	Invalid  bool   `json:"invalid,omitempty"`
	Problems string `json:"problems,omitempty"`
}

// InvalidHeader marks a draft that does not work, at the top of the file
// keep writes, so the person who opens it knows at once and can fix it.
func InvalidHeader(d *Draft) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// keep: THIS DRAFT DOES NOT WORK YET: it still failed after %d rounds with the model.\n", d.Rounds)
	b.WriteString("// Fix what is listed below, check it with keep try, and delete these lines.\n")
	for _, l := range strings.Split(strings.TrimSpace(d.Problems), "\n") {
		b.WriteString("//   " + reference.EscapeShown(l) + "\n")
	}
	return b.String()
}

const draftPrompt = `You write workflow files for keep, a local automation host. A workflow is one JavaScript file:
export default Keep.workflow({ name, topics, producers, consumers }) with Keep.consumer({ subscribe, publishes?, prepare, mutate, next }) for each consumer.
Use only the ctx operations and connector methods in the reference below, in the phases it allows. Register every input with a
clear title, give every event a stable messageId, reserve in prepare what mutate handles, put in data all mutate needs,
make at most one mutation in mutate, and give it a ui.title. Start the file with // @ts-check and a comment saying what it does.
Answer with the complete file only, in one fenced javascript block.

` + model.DataRule

// DraftWorkflow asks chat for a workflow and checks each answer by
// validating and dry-running it with reg's connectors (mutations captured,
// and reads too unless req.Try says otherwise); the problems go back to
// the model, DraftRounds times at most. After the last failed round it
// returns the last draft, Invalid, with the error.
func DraftWorkflow(ctx context.Context, chat *model.Chat, reg *connectors.Registry, pol engine.Policy, req DraftRequest) (*Draft, error) {
	var ref strings.Builder
	if err := reference.Build(reg).WriteText(&ref); err != nil {
		return nil, err
	}
	system := draftPrompt + "\n\n# Reference\n\n" + ref.String()
	if req.Guide != "" {
		system += "\n\n# Authoring guide\n\n" + req.Guide
	}
	user := "Write a workflow that does this: " + req.Description
	if req.Current != "" {
		user = "Here is a workflow file:\n\n```javascript\n" + req.Current + "\n```\n\nChange it as follows, keeping its name: " +
			req.Change + "\nAnswer with the complete new file."
	}
	msgs := []model.ChatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}}
	// A dry run from the deployed workflow's state (TryFn) runs on what it
	// read for real before: its state, its events. With reads captured
	// the person gave the model none of that, yet a draft that throws its
	// state would hand it back in the problems. So a run that fails there
	// is told to the model only as it fails on an empty database; one that
	// fails only there is the person's to read, never sent.
	private := req.TryFn != nil && req.Try.CaptureReads
	var problems, src string
	for round := 1; round <= DraftRounds; round++ {
		answer, err := chat.Complete(ctx, msgs)
		if err != nil && round > 1 {
			// the model's last draft is still the person's to fix, as
			// after the last round
			return &Draft{Source: src, Rounds: round - 1, Invalid: true, Problems: problems},
				fmt.Errorf("the model failed at round %d, so the last draft is the one of round %d: %w", round, round-1, err)
		}
		if err != nil {
			return nil, err
		}
		src = codeOf(answer)
		var rep *api.TryReport
		if req.TryFn != nil {
			rep, err = req.TryFn(ctx, req.FileName, []byte(src), req.Try)
		} else {
			rep, err = Try(ctx, reg, pol, req.FileName, []byte(src), req.Try)
		}
		problems = draftProblems(req, rep, err)
		if problems == "" {
			return &Draft{Source: src, Rounds: round, Report: rep}, nil
		}
		if private && err == nil && req.Name == rep.Workflow {
			empty, err := Try(ctx, reg, pol, req.FileName, []byte(src), req.Try)
			told := ""
			if err != nil {
				told = err.Error()
			} else {
				told = runProblems(empty)
			}
			if told == "" {
				return &Draft{Source: src, Rounds: round, Report: rep, Invalid: true, Problems: problems},
					fmt.Errorf("the draft fails from the workflow's own state (not handed back to the model, as it may hold the workflow's data): %s", problems)
			}
			problems = told
		}
		msgs = append(msgs, model.ChatMessage{Role: "assistant", Content: answer},
			model.ChatMessage{Role: "user", Content: "That file does not work yet. What validating and dry-running it reported, as data:\n" +
				model.Untrusted("problems", problems) + "\nAnswer with the complete corrected file."})
	}
	return &Draft{Source: src, Rounds: DraftRounds, Invalid: true, Problems: problems},
		fmt.Errorf("no working draft after %d rounds; the last one: %s", DraftRounds, problems)
}

// draftProblems is what is wrong with a draft's dry run (rep, err), or "".
func draftProblems(req DraftRequest, rep *api.TryReport, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case req.Name != "" && rep.Workflow != req.Name:
		return fmt.Sprintf("the draft renames the workflow %q to %q; a change must keep the name %q", req.Name, rep.Workflow, req.Name)
	}
	return runProblems(rep)
}

// runProblems lists the failed runs of a dry run, with the end of their
// traces: what a model needs to fix its script.
func runProblems(rep *api.TryReport) string {
	var b strings.Builder
	for _, r := range rep.Failed() {
		fmt.Fprintf(&b, "- %s %s failed: %s\n", r.HandlerType, r.Handler, r.Error)
		for _, l := range r.Trace[max(0, len(r.Trace)-5):] {
			fmt.Fprintf(&b, "    [%s] %s %s.%s %s %s\n", l.Phase, l.Kind, l.Connector, l.Method, model.Clip(l.Result, 200), l.Error)
		}
	}
	return b.String()
}

// codeOf is the code of a model's answer: the first fenced block, or the
// whole answer when it has none.
func codeOf(answer string) string {
	s := strings.TrimSpace(answer)
	start := strings.Index(s, "```")
	if start < 0 {
		return s + "\n"
	}
	rest := s[start+3:]
	if nl := strings.Index(rest, "\n"); nl >= 0 {
		rest = rest[nl+1:]
	}
	if end := strings.Index(rest, "```"); end >= 0 {
		rest = rest[:end]
	}
	return strings.TrimSpace(rest) + "\n"
}
