package engine_test

import (
	"keep/engine"
	"keep/engine/authoring"
)

// The internal tests' hooks into engine/authoring (authoring_hooks_test.go).
func init() {
	engine.AuthorOf = func(e *engine.Engine) engine.Author { return authoring.Author{E: e} }
	engine.RepairsOf = authoring.RepairsFrom
	engine.TryFile = authoring.Try
}
