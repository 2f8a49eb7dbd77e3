package engine

import (
	"strings"
	"testing"
)

// A built-in call that would allocate past the sandbox's per-call limit is
// a classified logic failure of the run (repairable, recorded with the
// limit it broke), not a crash of keep: the engine goes on with the next
// run.
func TestSandboxLimitIsALogicFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	b.write("inbox/a.txt", "alpha")
	b.deploy("notes", brokenNotes(`const s = "x".repeat(1 << 20); try { s.concat(...Array(100).fill(s)); } catch (e) {}
        `))
	b.drain()
	var found bool
	for _, r := range b.runs("notes") {
		if r.Handler == "logNote" && r.Status == "failed:logic" &&
			strings.Contains(r.Error, "String.prototype.concat would allocate") && strings.Contains(r.Error, "over the limit of 64 MiB for one call") {
			found = true
		}
	}
	if !found {
		t.Fatalf("runs = %+v, want logNote failed:logic naming String.prototype.concat and its limit", b.runs("notes"))
	}
}
