package engine

import (
	"strconv"
	"strings"
	"time"

	"keep/storage"
)

// A retry or resume answers one block of a workflow, and a workflow is
// blocked many times: run 41 fails and is retried, later run 57 fails. A
// retry keyed from the first one's card (a stale screen, a late socket
// call, a script) must not clear the second, which its sender never saw;
// as an answer to a mutation names its attempt (parseAnswerID), a
// workflow answer may name its block: "notes@7".

// workflowAnswer is a retry's or resume's subject as given: the workflow
// and, when named, the block it answers (0: the workflow as seen
// unblocked).
type workflowAnswer struct {
	name  string
	block int64
	named bool
}

// parseWorkflowAnswer reads "notes", the workflow as it is now (the
// person typed its name knowing nothing more), or "notes@7", the workflow
// as its block 7 was shown (api.AttentionItem.WorkflowAnswerID). A
// workflow name holds no '@' (sandbox.CheckWorkflowName), so the cut is the
// name's end.
func parseWorkflowAnswer(s string) (workflowAnswer, error) {
	name, n, named := strings.Cut(strings.TrimSpace(s), "@")
	a := workflowAnswer{name: name, named: named}
	if named {
		block, err := strconv.ParseInt(n, 10, 64)
		if err != nil || block < 0 {
			return a, notFoundf("workflow %q: the block after @ is not a number", s)
		}
		a.block = block
	}
	return a, nil
}

// standingBlock is the number of the block w stands on, 0 while unblocked.
func standingBlock(w *storage.Workflow) int64 {
	if w.BlockKind == storage.BlockNone {
		return 0
	}
	return w.BlockSeq
}

// blockedSince is when w's standing block was set: what its card says it
// has waited since. The row's updated_at moves with any change to it (a
// pause, a new version) and would make an old question look new.
func blockedSince(w *storage.Workflow) time.Time {
	if w.BlockedAt != nil {
		return *w.BlockedAt
	}
	return w.UpdatedAt
}

// answersStanding refuses an answer given to another block of w than the
// one standing: it changes nothing, and says what w waits on now.
func (a workflowAnswer) answersStanding(w *storage.Workflow, verb string) error {
	now := standingBlock(w)
	if !a.named || a.block == now {
		return nil
	}
	was := "it as shown unblocked"
	if a.block > 0 {
		was = "its block " + strconv.FormatInt(a.block, 10)
	}
	if now == 0 {
		return refusedf("workflow %s is not blocked now, and the %s was to %s: nothing was changed", w.Name, verb, was)
	}
	since := ""
	if w.BlockedAt != nil {
		since = " since " + w.BlockedAt.Local().Format(time.RFC3339)
	}
	return refusedf("workflow %s waits on %s%s (its block %d), and the %s was to %s: nothing was changed; answer the block as it is now (keep attention, keep %s %s@%d)",
		w.Name, blockWords(w), since, now, verb, was, verb, w.Name, now)
}
