// Package authoring is keep's side of writing workflows, above the run
// loop: drafts (keep new, keep edit), dry runs on a throw-away engine,
// proposals made for the person (validated, summarised, diffed, dry-run),
// repairs handed to a model, and the tools of keep mcp serve. It drives
// the engine through its narrow face (engine/face.go) and its API; the
// engine reaches it only through the Repairer given at construction. The
// model's side (a chat client, repairers, quoting) is authoring/model.
package authoring

import (
	"context"

	"keep/engine"
	"keep/engine/api"
)

// Author is authoring's part of the API on an engine: dry runs and
// proposals. engine/daemon composes it with the run loop into the whole
// api.API.
type Author struct{ E *engine.Engine }

// ChangeTrier is what front ends that hold a deployed workflow (the
// in-process engine, the daemon's client) offer keep edit: TryChange.
type ChangeTrier interface {
	TryChange(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error)
}

var _ ChangeTrier = Author{}
