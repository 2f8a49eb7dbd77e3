package daemon

import (
	"context"
	"fmt"
	"path/filepath"

	"keep/engine"
)

// Maintainer is what a daemon's engine offers beyond engine.API for the
// care of its database: gc with the daemon's own retention policy, and a
// consistent backup taken while it runs (engine.Maintained).
type Maintainer interface {
	GC(ctx context.Context) (engine.GCReport, error)
	Backup(ctx context.Context, path string) error
}

func maintainer(api engine.API) (Maintainer, error) {
	m, ok := api.(Maintainer)
	if !ok {
		return nil, fmt.Errorf("daemon: this daemon does not offer gc or backup: %w", engine.ErrRefused)
	}
	return m, nil
}

func init() {
	methods["gc"] = func(ctx context.Context, api engine.API, _ request) (any, error) {
		m, err := maintainer(api)
		if err != nil {
			return nil, err
		}
		return m.GC(ctx)
	}
	methods["backup"] = func(ctx context.Context, api engine.API, r request) (any, error) {
		m, err := maintainer(api)
		if err != nil {
			return nil, err
		}
		// the daemon writes the file: a relative path would land in its
		// working directory, not the caller's
		if !filepath.IsAbs(r.Path) {
			return nil, fmt.Errorf("daemon: backup: %q is not an absolute path", r.Path)
		}
		return nil, m.Backup(ctx, r.Path)
	}
}

// GC asks the daemon to apply its retention policy now.
func (c *Client) GC(ctx context.Context) (engine.GCReport, error) {
	var rep engine.GCReport
	err := c.call(ctx, "gc", request{}, &rep)
	return rep, err
}

// Backup asks the daemon to write a consistent copy of its database to path
// (absolute).
func (c *Client) Backup(ctx context.Context, path string) error {
	return c.call(ctx, "backup", request{Path: path}, nil)
}
