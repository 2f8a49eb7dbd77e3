package api

import (
	"testing"

	"keep/engine/enginetest/walk"
)

// TestAPIStandsBelowTheEngine: the API and every type its methods take or
// give are declared here, and this package takes of keep only the rooms
// below the engine (the ledger's words, storage's states, a script's
// manifest, a connector's argument rules): never the run loop, authoring
// or a front end, so whatever implements the API, and whoever calls it,
// stands above it (issue 41).
func TestAPIStandsBelowTheEngine(t *testing.T) {
	allowed := map[string]bool{"keep/storage": true, "keep/sandbox": true, "keep/engine/ledger": true, "keep/connectors": true}
	for name, paths := range walk.Imports(t, "*.go") {
		for _, path := range paths {
			if !allowed[path] {
				t.Errorf("%s imports %s: the API takes of keep only %v", name, path, allowed)
			}
		}
	}
}
