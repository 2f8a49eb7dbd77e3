package files

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"

	"keep/connectors"
)

// Reconcile compares the disk with the parameters the ledger recorded
// (DESIGN §6): the file is the only witness, and the parameters say what it
// should look like if the mutation happened.
//
// A disk that cannot be read now gives Unknown with a transient error, so
// the host tries again later; a bad parameter or a path outside the roots
// cannot get better and is returned as such.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if err := ctx.Err(); err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Transient, "reconcile files.%s: %w", call.Method, err)
	}
	switch call.Method {
	case "write":
		return c.reconcileWrite(call.Params)
	case "append":
		return c.reconcileAppend(call.Params)
	case "move":
		return c.reconcileMove(call.Params)
	default:
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "files.%s is not a mutation", call.Method)
	}
}

// reconcileWrite: applied if the file holds exactly the content, else not
// applied. A later change by someone else reads as "not applied", and the
// write is done again: the file then says what the workflow meant it to.
func (c *Connector) reconcileWrite(p map[string]any) (connectors.Verdict, any, error) {
	t, content, data, err := c.reconcileRead(p)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if data == nil || !bytes.Equal(data, []byte(content)) {
		return connectors.NotApplied, nil, nil
	}
	return connectors.Applied, map[string]any{"path": t.shown(), "size": int64(len(data))}, nil
}

// reconcileAppend: applied if the file ends with the content and holds it
// nowhere before; not applied if the content is nowhere in it; else
// unknown. The ledger has the content, not the file's size before, so a file
// that ends with the content and held it earlier too (the same line
// appended every day) reads the same whether this append happened or not:
// calling it applied would lose today's line.
func (c *Connector) reconcileAppend(p map[string]any) (connectors.Verdict, any, error) {
	t, content, data, err := c.reconcileRead(p)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	applied := map[string]any{"path": t.shown(), "size": int64(len(data))}
	switch {
	case data == nil:
		return connectors.NotApplied, nil, nil
	case content == "":
		return connectors.Applied, applied, nil // nothing to add: done either way
	case bytes.HasSuffix(data, []byte(content)) && bytes.Index(data, []byte(content)) == len(data)-len(content):
		return connectors.Applied, applied, nil
	case !bytes.Contains(data, []byte(content)):
		return connectors.NotApplied, nil, nil
	default:
		return connectors.Unknown, nil, nil
	}
}

// reconcileRead resolves path and content and reads the file; data is nil
// if the file does not exist.
func (c *Connector) reconcileRead(p map[string]any) (target, string, []byte, error) {
	t, err := c.resolve(p, "path")
	if err != nil {
		return target{}, "", nil, err
	}
	content, err := requiredString(p, "content")
	if err != nil {
		return target{}, "", nil, err
	}
	if _, err := os.Stat(t.abs); errors.Is(err, fs.ErrNotExist) {
		return t, content, nil, nil
	}
	// a file open for writing is compared as it stands: the writer may be
	// one that holds it open for ever (a log), and a reconciliation that
	// waited for it would never end
	data, _, err := c.readFile(t, false)
	if err != nil {
		// Includes a file grown past the cap: it cannot be compared now,
		// but may be later. The cause is kept, its class replaced.
		var ce *connectors.Error
		if errors.As(err, &ce) {
			err = ce.Err
		}
		return target{}, "", nil, connectors.Errorf(connectors.Transient, "reconcile: %w", err)
	}
	if data == nil {
		data = []byte{}
	}
	return t, content, data, nil
}

// reconcileMove: applied if to exists and from does not, not applied if
// from exists and to does not, unknown otherwise (both or neither: someone
// else has been at these files).
func (c *Connector) reconcileMove(p map[string]any) (connectors.Verdict, any, error) {
	from, err := c.resolve(p, "from")
	if err != nil {
		return connectors.Unknown, nil, err
	}
	to, err := c.resolve(p, "to")
	if err != nil {
		return connectors.Unknown, nil, err
	}
	fromThere, err := exists(from.abs)
	if err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Transient, "reconcile move: %w", err)
	}
	toThere, err := exists(to.abs)
	if err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Transient, "reconcile move: %w", err)
	}
	switch {
	case toThere && !fromThere:
		return connectors.Applied, map[string]any{"path": to.shown()}, nil
	case fromThere && !toThere:
		return connectors.NotApplied, nil, nil
	default:
		return connectors.Unknown, nil, nil
	}
}

func exists(abs string) (bool, error) {
	_, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
