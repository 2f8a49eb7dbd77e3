package sandbox

import (
	"strings"
	"testing"
	"time"
)

// TestValidateCalls: validation checks the calls as keep.d.ts types them,
// from the same method specs: the phase a call is made in, the topics and
// input sources it names, and literal argument values against the declared
// types, each with file:line:col.
func TestValidateCalls(t *testing.T) {
	t.Parallel()
	methods := append([]MethodSpec{
		{Connector: "http", Method: "get", Kind: KindRead, Args: []ArgSpec{{Name: "url", Type: "string"}}},
		{Connector: "http", Method: "request", Kind: KindMutate, Args: []ArgSpec{
			{Name: "method", Type: `"POST" | "PUT" | "PATCH" | "DELETE"`}, {Name: "url", Type: "string"},
			{Name: "headers", Type: "Record<string, string>"}}},
	}, testMethods...)
	opts := LoadOptions{Methods: methods, MinInterval: time.Minute,
		Sources: map[string][]string{"files": {"file"}, "system": {"schedule"}}}
	cases := []struct {
		name string
		h    handlers
		want string // "" : loads
	}{
		{"a method outside the declared union", handlers{mutate: `await ctx.http.request({ method: "POTS", url: "https://x" });`},
			`wf.js:21:34: ctx.http.request: method "POTS" is not a "POST" | "PUT" | "PATCH" | "DELETE"`},
		{"GET where a mutation is expected", handlers{mutate: `await ctx.http.request({ method: "GET", url: "https://x" });`},
			`wf.js:21:34: ctx.http.request: method "GET" is not a`},
		{"a number where a string is declared", handlers{producer: `await ctx.http.get({ url: 42 });`},
			`wf.js:9:27: ctx.http.get: url 42 is not a string`},
		{"a mutation in prepare", handlers{prepare: `await ctx.http.request({ method: "POST", url: "https://x" }); return { reservations: [], data: {} };`},
			`wf.js:18:7: ctx.http.request is a mutation and is called in prepare of consumer "c": mutations only happen in mutate`},
		{"a read in mutate", handlers{mutate: `await ctx.http.get({ url: "https://x" });`},
			`wf.js:21:7: ctx.http.get is a read and is called in mutate of consumer "c": mutate does no external reads`},
		{"publish in mutate", handlers{mutate: `await ctx.publish("b", { messageId: "m" });`},
			`wf.js:21:7: ctx.publish is called in mutate of consumer "c": events are published by producers and in next`},
		{"an undeclared topic", handlers{producer: `await ctx.publish("nope", { messageId: "m", inputId: "i" });`},
			`wf.js:9:19: ctx.publish names topic "nope", which is not declared in topics`},
		{"a topic the handler does not list", handlers{prepare: `await ctx.peek("b"); return { reservations: [], data: {} };`},
			`ctx.peek names topic "b", which prepare of consumer "c" does not list in subscribe`},
		{"an unknown input source", handlers{producer: `ctx.registerInput({ source: "fax", type: "page", id: "1", title: "T" });`},
			`wf.js:9:29: ctx.registerInput: unknown input source "fax" (known: files, system)`},
		{"an unknown input type", handlers{producer: `ctx.registerInput({ source: "files", type: "dir", id: "1", title: "T" });`},
			`ctx.registerInput: input source "files" has no type "dir" (its types: file)`},
		{"computed values are the run's to check", handlers{mutate: `const m = prepared.data.m; await ctx.http.request({ method: m, url: "https://x" });`}, ""},
		{"what is allowed loads", handlers{producer: `const id = ctx.registerInput({ source: "files", type: "file", id: "1", title: "T" }); await ctx.http.get({ url: "https://x" }); await ctx.publish("a", { messageId: "m", inputId: id });`,
			mutate: `await ctx.http.request({ method: "PATCH", url: "https://x", headers: { a: "b" } });`}, ""},
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
