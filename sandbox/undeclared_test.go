package sandbox

import (
	"strings"
	"testing"
	"time"
)

// A literal argument field the method does not declare is refused at
// validate, at the field, in the words the host refuses the call with when
// it runs (connectors.Undeclared): the connector would drop it silently and
// the call would do something else than the script asks. A tool whose input
// schema lets more fields through (OpenArgs) takes them.
func TestValidateUndeclaredFields(t *testing.T) {
	t.Parallel()
	methods := append([]MethodSpec{
		{Connector: "http", Method: "request", Kind: KindMutate, Args: []ArgSpec{
			{Name: "method", Type: `"POST" | "PUT" | "PATCH" | "DELETE"`}, {Name: "url", Type: "string"}, {Name: "json", Type: "any"},
			{Name: "reconcile", Type: "{ url: string }", Fields: []ArgSpec{{Name: "url", Type: "string", Required: true}}}}},
		{Connector: "system", Method: "now", Kind: KindRead},
		{Connector: "mcp.memory", Method: "search_nodes", Kind: KindRead, Args: []ArgSpec{{Name: "query", Type: "string", Required: true}}},
		{Connector: "mcp.loose", Method: "echo", Kind: KindRead, Args: []ArgSpec{{Name: "text", Type: "string"}}, OpenArgs: true},
		{Connector: "mcp.loose", Method: "write", Kind: KindMutate, OpenArgs: true, Args: []ArgSpec{{Name: "text", Type: "string"},
			{Name: "reconcile", Type: "{ tool: string, args?: Record<string, any>, match?: any }", Fields: []ArgSpec{
				{Name: "tool", Type: "string", Required: true}, {Name: "args", Type: "Record<string, any>"}, {Name: "match", Type: "any"}}}}},
	}, testMethods...)
	opts := LoadOptions{Methods: methods, MinInterval: time.Minute}
	cases := []struct {
		name string
		h    handlers
		want string // "" : loads
	}{
		{"a misspelt field", handlers{mutate: `await ctx.http.request({ methd: "POST", url: "https://x" });`},
			`wf.js:21:26: ctx.http.request takes no methd (it takes: method, url, json, reconcile)`},
		{"a misspelt field written short", handlers{mutate: `const jsn = { a: 1 }; await ctx.http.request({ method: "POST", url: "https://x", jsn });`},
			`ctx.http.request takes no jsn (it takes: method, url, json, reconcile)`},
		{"a quoted key", handlers{mutate: `await ctx.http.request({ "method": "POST", url: "https://x", "Json": {} });`},
			`ctx.http.request takes no Json (it takes: method, url, json, reconcile)`},
		{"a method that takes nothing", handlers{producer: `await ctx.system.now({ tz: "UTC" });`},
			`wf.js:9:24: ctx.system.now takes no tz (it takes nothing)`},
		{"a tool whose schema names its fields", handlers{producer: `await ctx.mcp.memory.search_nodes({ query: "x", qeury: "y" });`},
			`wf.js:9:49: ctx.mcp.memory.search_nodes takes no qeury (it takes: query)`},
		{"a tool whose schema allows more fields", handlers{producer: `await ctx.mcp.loose.echo({ text: "x", more: 1 });`}, ""},
		{"a computed key is the run's to check", handlers{mutate: `const k = "url"; await ctx.http.request({ method: "POST", [k]: "https://x" });`}, ""},
		{"declared fields load", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", json: { a: 1 } });`}, ""},

		// inside an argument whose fields are declared: a misspelt
		// reconcile.url would leave an unknown outcome nothing to check by
		{"a misspelt nested field", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: { urll: "https://x/1" } });`},
			`wf.js:21:73: ctx.http.request takes no reconcile.urll (reconcile takes: url)`},
		{"a nested field written short", handlers{mutate: `const urll = "https://x/1"; await ctx.http.request({ method: "POST", url: "https://x", reconcile: { urll } });`},
			`ctx.http.request takes no reconcile.urll (reconcile takes: url)`},
		{"a required nested field missing", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: {} });`},
			`wf.js:21:71: ctx.http.request reconcile needs url`},
		{"no object where one is declared", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: "https://x/1" });`},
			`wf.js:21:71: ctx.http.request reconcile must be an object { url: string }, not a string`},
		{"a nested field of an open tool", handlers{mutate: `await ctx.mcp.loose.write({ text: "x", more: 1, reconcile: { tol: "read" } });`},
			`wf.js:21:62: ctx.mcp.loose.write takes no reconcile.tol (reconcile takes: tool, args, match)`},
		{"a nested field's literal of another type", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: { url: 3 } });`},
			`wf.js:21:78: ctx.http.request: reconcile.url 3 is not a string`},
		{"declared nested fields load", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: { url: "https://x/1" } });`}, ""},
		{"an open nested field takes anything", handlers{mutate: `await ctx.mcp.loose.write({ text: "x", reconcile: { tool: "read", args: { any: 1 }, match: { id: 1 } } });`}, ""},
		{"a null reconcile is none", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", reconcile: null });`}, ""},
		{"an object built elsewhere is the run's to check", handlers{mutate: `const rec = { urll: "https://x/1" }; await ctx.http.request({ method: "POST", url: "https://x", reconcile: rec });`}, ""},
		{"a spread may hold the required field", handlers{mutate: `const base = { url: "https://x/1" }; await ctx.http.request({ method: "POST", url: "https://x", reconcile: { ...base } });`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("wf.js", []byte(tc.h.source()), opts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("load: %v\n%s", err, tc.h.source())
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("load: err = %v\nwant %s\n%s", err, tc.want, tc.h.source())
			}
		})
	}
}
