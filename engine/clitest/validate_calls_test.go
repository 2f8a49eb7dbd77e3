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
