package sheets

import (
	"context"
	"fmt"

	"keep/connectors"
)

// Reconcile implements connectors.Reconciler by re-reading the sheet: the
// mutation happened if a row carries its key in the hidden column.
//
// A missing sheet means the rename that would have created it never
// happened: NotApplied. A sheet that can't be read (or a path that no longer
// resolves, say after a config change) proves nothing: Unknown, with the
// reason as the error.
//
// A later updateRow of the same row replaces its key, so an update can read
// as NotApplied after another mutation overwrote it; within one workflow that
// can't happen, since the workflow is blocked while this one is unresolved.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if call.Method != "appendRow" && call.Method != "updateRow" {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Internal, "sheets.%s is not a mutation", call.Method)
	}
	if call.IdempotencyKey == "" {
		return connectors.Unknown, nil, fmt.Errorf("sheets.%s without an idempotency key: %w", call.Method, connectors.ErrCannotCheck)
	}
	if err := ctx.Err(); err != nil {
		return connectors.Unknown, nil, &connectors.Error{Class: connectors.Transient, Err: err}
	}
	loc, err := c.locate(call.Params)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	t, err := c.load(ctx, loc)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if i := t.findKeepID(call.IdempotencyKey); i >= 0 {
		return connectors.Applied, t.result(i), nil
	}
	return connectors.NotApplied, nil, nil
}
