package workflows

import (
	"sort"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// The host is enginetest's: a real engine on a real database in a temp dir,
// the files and sheets connectors rooted in another temp dir.
type (
	clock = enginetest.Clock
	host  = enginetest.Host
)

type hostOpt struct {
	edit func(*config.Config)
	// registry, if set, replaces engine.Connectors(cfg): for tests that need
	// a connector built differently (the system clock).
	registry func(cfg config.Config, c *clock) *connectors.Registry
	start    time.Time
}

func allowAll(c *config.Config) { enginetest.AllowMutations(c) }

// newHost leaves engine.Connectors' connectors on the wall clock, as keep
// builds them; a test that needs ctx.system.now on the engine's clock
// brings its own registry.
func newHost(t *testing.T, o hostOpt) *host {
	t.Helper()
	eo := enginetest.Opts{Start: o.start, ConnectorsOnSystemClock: true}
	if o.edit != nil {
		eo.Config = append(eo.Config, o.edit)
	}
	if o.registry != nil {
		eo.Registry = func(cfg config.Config, c *clock) (*connectors.Registry, error) { return o.registry(cfg, c), nil }
	}
	return enginetest.New(t, eo)
}

// source is an embedded workflow, its constants rewritten by edits
// (old, new, old, new, ...), each of which must apply.
func source(t *testing.T, name string, edits ...string) []byte {
	t.Helper()
	f, ok := Get(name)
	if !ok {
		t.Fatalf("no embedded workflow %s", name)
	}
	src := string(f.Source)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("%s has no %q to rewrite", name, edits[i])
		}
		src = strings.ReplaceAll(src, edits[i], edits[i+1])
	}
	return []byte(src)
}

// titles lists the inputs' titles, sorted.
func titles(ins []api.InputView) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Title)
	}
	sort.Strings(out)
	return out
}
