package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"keep/connectors"
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

// A concurrent run that fails — a back-off, a refused credential or
// permission — while another run's block stands could not take the block,
// and when that block lifted nothing handed it one (only a logic failure
// is handed the block): the run stayed open as paused:transient or
// paused:approval for ever, with no timer, no prompt and nothing to close
// it, and one that failed past its mutation held its events reserved
// with it. It is ended instead, its work going on once the standing block
// lifts: afresh, or past its mutation, from emitting.
func TestFailureBehindABlockIsNotLeftOpen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cl      class
		phase   Phase
		refused bool // its call refused, rather than the run failing
	}{{classTransient, PhaseMutating, false}, {classAuth, PhaseMutating, false}, {classPermission, PhaseMutating, false},
		{classTransient, PhaseEmitting, false}, {classAuth, PhaseMutating, true}, {classPermission, PhaseMutating, true}} {
		t.Run(fmt.Sprintf("%s at %s, refused call %v", c.cl, c.phase, c.refused), func(t *testing.T) {
			t.Parallel()
			b, w, start := twoConcurrent(t)
			ctx := context.Background()
			asker, failing := start(), start()
			own := *w
			m := &storage.Mutation{RunID: asker.ID, WorkflowID: w.ID, Connector: "files", Method: "write",
				Params: json.RawMessage(`{"path":"a.txt","content":"x"}`), CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
			if err := b.e.tAwaitApproval(ctx, &own, asker, m, "asks", b.e.newTrace()); err != nil {
				t.Fatal(err)
			}
			own = *w
			if c.refused {
				call := &storage.Mutation{RunID: failing.ID, WorkflowID: w.ID, Connector: "files", Method: "write",
					Params: json.RawMessage(`{"path":"b.txt","content":"x"}`), CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
				tr := b.e.newTrace()
				if err := b.e.tInFlight(ctx, &own, failing, call, tr, nil, nil); err != nil {
					t.Fatal(err)
				}
				own = *w
				if err := b.e.tMutationOutcome(ctx, &own, failing, call, nil, connectors.Errorf(connectors.Class(c.cl), "refused"), tr); err != nil {
					t.Fatal(err)
				}
			} else {
				failing.Phase, failing.Status, failing.Error = c.phase, c.cl.RunStatus(), "it went wrong"
				if err := b.e.tFail(ctx, &own, failing, c.cl, b.e.newTrace()); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.e.Approve(ctx, fmt.Sprint(m.ID), false); err != nil {
				t.Fatal(err)
			}
			b.drain()
			for _, r := range b.runs("two") {
				if r.Status != RunCommitted && r.Status != RunRetried {
					t.Errorf("run %s is %s at %s once the approval is answered and the workflow drained; want every run committed or retried",
						r.ID, r.Status, r.Phase)
				}
			}
			if row := b.workflowRow("two"); row.BlockKind != BlockNone {
				t.Errorf("blocked on %s: %s", row.BlockKind, row.BlockReason)
			}
		})
	}
}
