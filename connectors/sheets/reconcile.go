package sheets

import (
	"context"
	"fmt"

	"keep/connectors"
)

// Reconcile implements connectors.Reconciler by re-reading the sheet: the
// mutation happened if a row carries its key's tag (rowTag) in the hidden
// column.
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
	if i := t.findKeepID(c.rowTag(call.IdempotencyKey)); i >= 0 {
		return connectors.Applied, t.result(i), nil
	}
	// A row holding the raw key is what an earlier keep wrote, before rows
	// carried a tag, and also what anyone who has seen keep's keys could
	// write for the next one. Applied would let a forger stand in for a
	// write keep lost; NotApplied would have the host write a second row
	// when the row is keep's own. Neither can be told from the sheet, so
	// the person is asked, at once: reading the sheet again won't tell.
	if i := t.findKeepID(call.IdempotencyKey); i >= 0 {
		return connectors.Unknown, nil, fmt.Errorf(
			"%s holds this mutation's key in %s%d (the hidden %s column) as an earlier keep wrote it, and as anyone who knows the key could: "+
				"check whether that row is the one keep meant to write: %w", loc.label, columnName(t.keepCol), i+2, KeepIDColumn, connectors.ErrCannotCheck)
	}
	return connectors.NotApplied, nil, nil
}
