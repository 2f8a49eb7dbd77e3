package daemon

import (
	"context"

	"keep/engine"
	"keep/engine/authoring"
)

// whole is the run loop with authoring: every method of api.API. The
// engine stands below authoring, which drives it (dry runs on a throw-away
// engine, proposals filed in its ledger), so neither package can hold the
// whole; every process gets it here (Site.Get), and the socket serves it.
type whole struct {
	*engine.Engine
	authoring.Author
}

func wholeOf(e *engine.Engine) whole { return whole{Engine: e, Author: authoring.Author{E: e}} }

// maintained is the whole as the socket serves it: `keep gc` through the
// socket applies the daemon's retention policy, not the caller's.
type maintained struct {
	whole
	retention engine.Retention
}

func maintainedOf(e *engine.Engine, r engine.Retention) maintained {
	return maintained{whole: wholeOf(e), retention: r}
}

// GC applies the engine's own retention policy now.
func (s maintained) GC(ctx context.Context) (engine.GCReport, error) {
	return s.Engine.GC(ctx, s.retention)
}
