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
			{Name: "method", Type: `"POST" | "PUT" | "PATCH" | "DELETE"`}, {Name: "url", Type: "string"}, {Name: "json", Type: "any"}}},
		{Connector: "system", Method: "now", Kind: KindRead},
		{Connector: "mcp.memory", Method: "search_nodes", Kind: KindRead, Args: []ArgSpec{{Name: "query", Type: "string", Required: true}}},
		{Connector: "mcp.loose", Method: "echo", Kind: KindRead, Args: []ArgSpec{{Name: "text", Type: "string"}}, OpenArgs: true},
	}, testMethods...)
	opts := LoadOptions{Methods: methods, MinInterval: time.Minute}
	cases := []struct {
		name string
		h    handlers
		want string // "" : loads
	}{
		{"a misspelt field", handlers{mutate: `await ctx.http.request({ methd: "POST", url: "https://x" });`},
			`wf.js:21:26: ctx.http.request takes no methd (it takes: method, url, json)`},
		{"a misspelt field written short", handlers{mutate: `const jsn = { a: 1 }; await ctx.http.request({ method: "POST", url: "https://x", jsn });`},
			`ctx.http.request takes no jsn (it takes: method, url, json)`},
		{"a quoted key", handlers{mutate: `await ctx.http.request({ "method": "POST", url: "https://x", "Json": {} });`},
			`ctx.http.request takes no Json (it takes: method, url, json)`},
		{"a method that takes nothing", handlers{producer: `await ctx.system.now({ tz: "UTC" });`},
			`wf.js:9:24: ctx.system.now takes no tz (it takes nothing)`},
		{"a tool whose schema names its fields", handlers{producer: `await ctx.mcp.memory.search_nodes({ query: "x", qeury: "y" });`},
			`wf.js:9:49: ctx.mcp.memory.search_nodes takes no qeury (it takes: query)`},
		{"a tool whose schema allows more fields", handlers{producer: `await ctx.mcp.loose.echo({ text: "x", more: 1 });`}, ""},
		{"a computed key is the run's to check", handlers{mutate: `const k = "url"; await ctx.http.request({ method: "POST", [k]: "https://x" });`}, ""},
		{"declared fields load", handlers{mutate: `await ctx.http.request({ method: "POST", url: "https://x", json: { a: 1 } });`}, ""},
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
