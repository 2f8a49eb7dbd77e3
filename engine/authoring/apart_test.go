package authoring

import (
	"path/filepath"
	"strings"
	"testing"

	"keep/engine/enginetest/walk"
)

// TestTheRunLoopStandsBelowAuthoring: authoring drives the engine (dry
// runs on a throw-away engine, proposals filed in its ledger), so the run
// loop imports nothing of authoring, the model's side included: it reaches
// authoring only through the Repairer it is given at construction, and
// none given is no repair (issue 41).
func TestTheRunLoopStandsBelowAuthoring(t *testing.T) {
	for name, paths := range walk.Imports(t, "../*.go") {
		for _, path := range paths {
			if path == "keep/engine/authoring" || strings.HasPrefix(path, "keep/engine/authoring/") {
				t.Errorf("engine/%s imports %s: the run loop reaches authoring only through Opts.Repairer", filepath.Base(name), path)
			}
		}
	}
}
