package daemon

import (
	"context"
	"fmt"

	"keep/engine"
	"keep/engine/api"
)

// Maintainer is what a daemon's engine offers beyond engine.API for the
// care of its database: gc with the daemon's own retention policy, and a
// consistent backup taken while it runs (maintained, whole.go).
type Maintainer interface {
	GC(ctx context.Context) (engine.GCReport, error)
	Backup(ctx context.Context, path string) error
}

func maintainer(api api.API) (Maintainer, error) {
	m, ok := api.(Maintainer)
	if !ok {
		return nil, fmt.Errorf("daemon: this daemon does not offer gc or backup: %w", engine.ErrRefused)
	}
	return m, nil
}

// GC asks the daemon to apply its retention policy now.
func (c *Client) GC(ctx context.Context) (engine.GCReport, error) {
	return gcRoute.call(ctx, c, request{})
}

// Backup asks the daemon to write a consistent copy of its database to path
// (absolute).
func (c *Client) Backup(ctx context.Context, path string) error {
	return backupRoute.call(ctx, c, request{Path: path})
}
