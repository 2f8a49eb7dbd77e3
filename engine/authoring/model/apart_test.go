package model

import (
	"testing"

	"keep/engine/enginetest/walk"
)

// TestAuthoringStandsApart: the model's side takes of keep only the
// connectors' credential transport and the config; never the engine, the
// ledger, storage or the sandbox, so what a model answers reaches the
// engine only as the script a RepairRequest asked for (issue 41).
func TestAuthoringStandsApart(t *testing.T) {
	allowed := map[string]bool{"keep/connectors": true, "keep/engine/config": true}
	for name, paths := range walk.Imports(t, "*.go") {
		for _, path := range paths {
			if !allowed[path] {
				t.Errorf("%s imports %s: authoring takes of keep only %v", name, path, allowed)
			}
		}
	}
}
