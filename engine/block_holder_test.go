package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"keep/storage"
)

// A concurrent run's failure that holds the workflow's block — a back-off,
// a refused credential or permission — is not lifted by the person's
// answer to another run's question queued behind it: the answer is to
// that run's call. Lifted, the back-off's timer was gone (the next run
// came at once), the "sign in again" or "grant it" prompt vanished from
// Attention, and the failed run stayed open, paused, with nothing to
// close it.
func TestAnswerBehindAFailureLeavesItsBlock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cl     class
		reject bool
	}{{classTransient, false}, {classAuth, false}, {classPermission, false}, {classTransient, true}, {classAuth, true}} {
		cl := c.cl
		t.Run(fmt.Sprintf("%s, reject %v", cl, c.reject), func(t *testing.T) {
			t.Parallel()
			b, w, start := twoConcurrent(t)
			ctx := context.Background()
			failing, asker := start(), start()
			own := *w
			failing.Phase, failing.Status, failing.Error = PhasePreparing, cl.RunStatus(), "it went wrong"
			if err := b.e.tFail(ctx, &own, failing, cl, b.e.newTrace()); err != nil {
				t.Fatal(err)
			}
			before := b.workflowRow("two")
			if before.BlockKind == BlockNone || before.BlockRunID != failing.ID {
				t.Fatalf("block %q of run %d, want the failure's", before.BlockKind, before.BlockRunID)
			}
			own = *w
			m := &storage.Mutation{RunID: asker.ID, WorkflowID: w.ID, Connector: "files", Method: "write",
				Params: json.RawMessage(`{"path":"a.txt","content":"x"}`), CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
			if err := b.e.tAwaitApproval(ctx, &own, asker, m, "asks", b.e.newTrace()); err != nil {
				t.Fatal(err)
			}
			answer := func() error { return b.e.Approve(ctx, fmt.Sprint(m.ID), false) }
			if c.reject {
				answer = func() error { return b.e.Reject(ctx, fmt.Sprint(m.ID)) }
			}
			if err := answer(); err != nil {
				t.Fatal(err)
			}
			after := b.workflowRow("two")
			if after.BlockKind != before.BlockKind || after.BlockRunID != failing.ID ||
				!reflect.DeepEqual(after.RetryAt, before.RetryAt) {
				t.Fatalf("after the answer to another run's call the block is %q of run %d (retry at %v), want %q of run %d (retry at %v) standing",
					after.BlockKind, after.BlockRunID, after.RetryAt, before.BlockKind, failing.ID, before.RetryAt)
			}
		})
	}
}
