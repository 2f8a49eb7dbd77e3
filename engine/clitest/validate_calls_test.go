package clitest

import (
	"strings"
	"testing"
)

// keep validate checks a call's literal arguments against the types
// keep.d.ts gives them, from the registry of the config's connectors.
func TestValidateChecksArgumentsAgainstTheRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	src := `export default Keep.workflow({
  name: "posts", topics: { t: {} },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { return { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POTS", url: "https://example.com/x" }); },
    async next(ctx) { await ctx.http.request({ method: "GET", url: "https://example.com/x" }); } }) } });
`
	file := e.file(e.dir, "posts.js", src)
	r := e.expect(1, "validate", file)
	for _, want := range []string{
		file + `:5:58: ctx.http.request: method "POTS" is not a "POST" | "PUT" | "PATCH" | "DELETE"`,
		file + `:6:56: ctx.http.request: method "GET" is not a "POST" | "PUT" | "PATCH" | "DELETE"`,
		file + `:6:29: ctx.http.request is a mutation and is called in next of consumer "c": mutations only happen in mutate`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("want %q in:\n%s", want, r.stderr)
		}
	}
}

// keep validate on a file nested far too deep says so, at the bracket that
// went past the bound, instead of a memory or time limit at 0:0; nesting
// with no brackets (a run of operators) is too deep too, without a place.
func TestValidateNestingTooDeep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	parens := e.file(e.dir, "parens.js", "// deep\nexport default "+strings.Repeat("(", 300000)+"1"+strings.Repeat(")", 300000)+"\n")
	r := e.expect(1, "validate", parens)
	if want := parens + ":2:1016: nesting too deep"; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("want %q, got:\n%s", want, r.stderr)
	}
	for _, bad := range []string{"memory", "time limit", ":0:0:"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("the error speaks of %q:\n%s", bad, r.stderr)
		}
	}
	nots := e.file(e.dir, "nots.js", "export default "+strings.Repeat("!", 300000)+"1\n")
	r = e.expect(1, "validate", nots)
	if !strings.HasPrefix(r.stderr, nots+":0:0: nesting too deep") || strings.Contains(r.stderr, "memory") {
		t.Errorf("a run of 300000 operators:\n%s", r.stderr)
	}
	// below the bound, brackets in strings and comments not counted, a
	// template's counted: the file loads
	shallow := e.file(e.dir, "shallow.js", "// "+strings.Repeat("(", 5000)+"\nconst s = \""+strings.Repeat("[", 5000)+"\";\nexport default "+
		strings.Repeat("(", 900)+"Keep.workflow({ name: `x${"+strings.Repeat("[", 50)+"1"+strings.Repeat("]", 50)+"}`, topics: {} })"+strings.Repeat(")", 900)+"\n")
	if r := e.ok("validate", shallow); !strings.Contains(r.stdout, `ok: workflow "x1"`) {
		t.Errorf("a file below the bound:\n%s", r)
	}
}
