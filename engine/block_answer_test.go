package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/storage"
)

// failingWorkflow fails every run: each retry ends in a new block.
const failingWorkflow = `export default Keep.workflow({ name: "bad", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async () => { throw new Error("connection refused"); } } },
  consumers: {} });`

// workflowAnswersOf is the history of the person's answers about wf itself.
func (b *bundle) workflowAnswersOf(wf string) []storage.AnswerRecord {
	b.t.Helper()
	as, err := b.db.Read().Answers(context.Background(), "workflow", b.workflowRow(wf).ID)
	if err != nil {
		b.t.Fatal(err)
	}
	return as
}

// TestWorkflowAnswerToAnEarlierBlockRefused: a workflow blocks, is
// retried, and blocks again on something else. A retry or resume keyed
// from the first block's card (WORKFLOW@N) is refused and changes nothing;
// one naming the standing block clears it, and the history says which
// block each answer was to. The plain name answers whatever stands, as
// the CLI always did.
func TestWorkflowAnswerToAnEarlierBlockRefused(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"retry", "resume"} {
		t.Run("a "+answer+" to an earlier block is refused; to the standing one it answers it", func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t, allowMutations)
			give := map[string]func(context.Context, string) error{"retry": b.e.Retry, "resume": b.e.Resume}[answer]
			b.deploy("bad", failingWorkflow)
			b.drain()

			first := b.workflowRow("bad")
			if first.BlockKind == BlockNone || first.BlockSeq < 1 {
				t.Fatalf("after a failure the workflow holds block %q number %d, want a numbered block", first.BlockKind, first.BlockSeq)
			}
			card := b.attentionOf(api.AttentionFailedRun)
			if len(card) != 1 || card[0].WorkflowAnswerID() != "bad@"+strconv.FormatInt(first.BlockSeq, 10) {
				t.Fatalf("failed-run cards %+v, want one answering bad@%d", card, first.BlockSeq)
			}
			stale := card[0].WorkflowAnswerID()
			if err := b.e.Retry(ctx, stale); err != nil {
				t.Fatalf("retry %s while its block stands: %v", stale, err)
			}
			b.drain() // fails again: another block

			second := b.workflowRow("bad")
			if second.BlockKind == BlockNone || second.BlockSeq <= first.BlockSeq {
				t.Fatalf("the second failure holds block %q number %d, want a block numbered past %d", second.BlockKind, second.BlockSeq, first.BlockSeq)
			}
			answersBefore, runsBefore := len(b.workflowAnswersOf("bad")), len(b.runs("bad"))

			// a screen still showing the first card, or a late socket call
			err := give(ctx, stale)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "nothing was changed") ||
				!strings.Contains(err.Error(), "bad") || !strings.Contains(err.Error(), "since") ||
				!strings.Contains(err.Error(), "block "+strconv.FormatInt(first.BlockSeq, 10)) {
				t.Fatalf("%s %s with block %d standing: %v, want refused naming the workflow, what it waits on since when, and that nothing changed",
					answer, stale, second.BlockSeq, err)
			}
			if now := b.workflowRow("bad"); now.BlockKind != second.BlockKind || now.BlockSeq != second.BlockSeq || now.Status != second.Status {
				t.Fatalf("after the refused %s: block %q number %d status %s, want block %q number %d status %s untouched",
					answer, now.BlockKind, now.BlockSeq, now.Status, second.BlockKind, second.BlockSeq, second.Status)
			}
			if n, r := len(b.workflowAnswersOf("bad")), len(b.runs("bad")); n != answersBefore || r != runsBefore {
				t.Fatalf("after the refused %s: %d answers and %d runs, want %d and %d", answer, n, r, answersBefore, runsBefore)
			}

			// the same block keeps its number across a restart
			b.reopen()
			if again := b.workflowRow("bad"); again.BlockSeq != second.BlockSeq {
				t.Fatalf("after a restart the block is number %d, want %d", again.BlockSeq, second.BlockSeq)
			}
			current := "bad@" + strconv.FormatInt(second.BlockSeq, 10)
			give = map[string]func(context.Context, string) error{"retry": b.e.Retry, "resume": b.e.Resume}[answer]
			if err := give(ctx, current); err != nil {
				t.Fatalf("%s %s while it stands: %v", answer, current, err)
			}
			if w := b.workflowRow("bad"); w.BlockKind != BlockNone {
				t.Fatalf("after %s %s the workflow is blocked (%s)", answer, current, w.BlockKind)
			}
			as := b.workflowAnswersOf("bad")
			if last := as[len(as)-1]; len(as) != answersBefore+1 || last.Answer != answer || int64(last.Attempt) != second.BlockSeq {
				t.Fatalf("answers %+v, want a new last one: %s to block %d", as, answer, second.BlockSeq)
			}
			if as[0].Answer != "retry" || int64(as[0].Attempt) != first.BlockSeq {
				t.Fatalf("the first answer is %+v, want retry to block %d, kept as it was", as[0], first.BlockSeq)
			}

			// the name alone answers whatever stands, and says which it was
			b.drain()
			third := b.workflowRow("bad")
			if err := give(ctx, "bad"); err != nil {
				t.Fatalf("%s bad: %v", answer, err)
			}
			as = b.workflowAnswersOf("bad")
			if last := as[len(as)-1]; last.Answer != answer || int64(last.Attempt) != third.BlockSeq {
				t.Fatalf("plain %s recorded %+v, want it to block %d", answer, last, third.BlockSeq)
			}
		})
	}

	t.Run("a workflow drawn unblocked is not resumed past a block it has since", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		b := setup(t, allowMutations)
		b.deploy("bad", failingWorkflow)
		if err := b.e.Pause(ctx, "bad"); err != nil {
			t.Fatal(err)
		}
		seen := b.workflow("bad").Block.AnswerTo("bad") // a paused, unblocked row: bad@0
		if seen != "bad@0" {
			t.Fatalf("an unblocked workflow is answered as %q, want bad@0", seen)
		}
		if err := b.e.Resume(ctx, seen); err != nil {
			t.Fatalf("resume %s while unblocked: %v", seen, err)
		}
		b.drain()
		if err := b.e.Pause(ctx, "bad"); err != nil {
			t.Fatal(err)
		}
		if err := b.e.Resume(ctx, seen); !errors.Is(err, ErrRefused) {
			t.Fatalf("resume %s once blocked: %v, want refused", seen, err)
		}
		if w := b.workflowRow("bad"); w.Status != WorkflowPaused || w.BlockKind == BlockNone {
			t.Fatalf("after the refused resume: %s, block %q; want still paused and blocked", w.Status, w.BlockKind)
		}
		for _, bad := range []string{"bad@x", "bad@-1"} {
			if err := b.e.Retry(ctx, bad); !errors.Is(err, ErrNotFound) {
				t.Errorf("retry %q: %v, want not found", bad, err)
			}
		}
	})
}
