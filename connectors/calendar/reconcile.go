package calendar

import (
	"context"
	"fmt"

	"keep/connectors"
)

// Reconcile implements connectors.Reconciler by fetching the event: a
// create happened if its UID (derived from the key) exists, a delete if the
// UID no longer does, an update if the event holds every field it set. A
// failed fetch proves nothing: Unknown, with the reason.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if c.base == nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "the calendar is not configured: set [connectors.calendar] url")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var uid string
	switch call.Method {
	case "create":
		if call.IdempotencyKey == "" {
			return connectors.Unknown, nil, fmt.Errorf("calendar.create without an idempotency key: %w", connectors.ErrCannotCheck)
		}
		uid = uidFor(call.IdempotencyKey)
	case "update", "delete":
		uid, _ = call.Params["uid"].(string)
		if uid == "" {
			return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "calendar.%s without a uid", call.Method)
		}
	default:
		return connectors.Unknown, nil, connectors.Errorf(connectors.Internal, "calendar.%s is not a mutation", call.Method)
	}
	obj, err := c.find(ctx, uid)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	switch call.Method {
	case "create":
		if obj == nil {
			return connectors.NotApplied, nil, nil
		}
		return connectors.Applied, map[string]any{"uid": uid}, nil
	case "delete":
		if obj == nil {
			return connectors.Applied, map[string]any{"uid": uid, "deleted": true}, nil
		}
		return connectors.NotApplied, nil, nil
	}
	if obj == nil {
		return connectors.NotApplied, nil, nil
	}
	f, err := readFields(call.Params, c.loc)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	ev, err := masterMap(obj, uid, c.loc)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if diff := f.differences(ev); len(diff) > 0 {
		return connectors.NotApplied, nil, nil
	}
	return connectors.Applied, ev, nil
}
