package clitest

import (
	"strings"
	"testing"
)

// keep validate and keep deploy say all a workflow may do (its manifest):
// its reads and the hosts it names beside its mutations; a file that
// reaches ctx by a computed name is refused with where.
func TestValidateAndDeploySayTheManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	f := e.file(e.dir, "lines.js", filesWorkflow)
	r := e.ok("validate", f)
	if !strings.Contains(r.stdout, "mutates: files.append") || !strings.Contains(r.stdout, "reads: files.list") {
		t.Fatalf("keep validate: %s", r)
	}
	r = e.ok("deploy", f)
	if !strings.Contains(r.stdout, "reads: files.list\nhosts: -\n") || !strings.Contains(r.stdout, "files.append") {
		t.Fatalf("keep deploy: %s", r)
	}
	bad := e.file(e.dir, "bad.js", strings.Replace(filesWorkflow, `await ctx.files.append(`, `await ctx["fil" + "es"].append(`, 1))
	r = e.expect(1, "validate", bad)
	if !strings.Contains(r.stderr, "bad.js:33:15: ctx (ctx) is used in a way keep cannot follow") {
		t.Fatalf("keep validate of a computed name: %s", r)
	}
}
