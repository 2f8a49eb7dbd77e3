package ledger

// The run a move on a mutation acts on is the ledger's to find, in the
// move's own transaction: the engine passes what the person or the
// connector answered, never a run it chose (issue 41; runtargets_test.go in
// the engine holds every other package to it).

import (
	"context"
	"fmt"

	"keep/storage"
)

// Carrier is the open run that carries m now: its own run, or the retry or
// recovery run that took it over (the newest open one). A mutation no open
// run carries is an error naming it. The moves below find it themselves;
// a view reads it to show it.
func Carrier(ctx context.Context, q storage.Q, m *storage.Mutation) (*storage.Run, error) {
	runs, err := q.RunsCarrying(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].ClosedAt == nil {
			return runs[i], nil
		}
	}
	return nil, fmt.Errorf("mutation %d: no open run carries it", m.ID)
}

// waiting is the run that carries m, paused on the person's approval; a run
// that no longer waits (answered, or taken over by recovery, which sends
// an approved call itself) is refused.
func waiting(ctx context.Context, q storage.Q, m *storage.Mutation) (*storage.Run, error) {
	run, err := Carrier(ctx, q, m)
	if err != nil {
		return nil, err
	}
	if run.Status != storage.RunPausedApproval {
		return nil, fmt.Errorf("%w: mutation %d was already answered", ErrRefused, m.ID)
	}
	return run, nil
}

// AwaitsApproval: m, and the run that carries it, wait on the person's
// approval, so Approve or Reject would take it (a grant releasing the calls
// it now allows asks first). An error is a read that failed or no open run.
func AwaitsApproval(ctx context.Context, q storage.Q, m *storage.Mutation) (bool, error) {
	if m.Status != storage.MutationAwaitingApproval {
		return false, nil
	}
	run, err := Carrier(ctx, q, m)
	if err != nil {
		return false, err
	}
	return run.Status == storage.RunPausedApproval, nil
}
