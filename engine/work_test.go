package engine

import (
	"strings"
	"testing"
)

// TestWorkKindNames: each kind of work has its own name for logs and
// traces, and a value outside the kinds says so instead of passing as one.
func TestWorkKindNames(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for k := workKind(0); k < workKinds; k++ {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "work(") || seen[name] {
			t.Errorf("kind %d is named %q", int(k), name)
		}
		seen[name] = true
	}
	if got := workKinds.String(); got != "work(6)" {
		t.Errorf("an unknown kind is named %q", got)
	}
}
