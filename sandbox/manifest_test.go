package sandbox

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// loadUnnamed loads a script in this process letting through the uses of
// ctx the analysis cannot name (which Load refuses): for the tests of what
// the run's own guards do with a script that reaches ctx anyway.
func loadUnnamed(t testing.TB, h handlers) *Script {
	t.Helper()
	s, err := loadChecked("t.js", []byte(h.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}, true)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, numbered(h.source()))
	}
	return s
}

// A use of ctx the analysis cannot name is refused at validate, with where
// it is written: the red-team's rewrite (computed connector and method
// names through an alias), and every other way to reach ctx unnamed.
func TestUnnamedCtxIsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, code, want string }{
		{"an alias indexed by computed names", `const c = ctx, F = "fil" + "es"; await c[F]["re" + "ad"]({ path: "secret.txt" });`,
			`t.js:9:40: c (ctx) is used in a way keep cannot follow`},
		{"ctx indexed by a computed key", `const F = "files"; await ctx[F].list({});`, `t.js:9:26: ctx (ctx) is used`},
		{"ctx indexed by a string", `await ctx["files"].list({});`, `t.js:9:7: ctx (ctx) is used`},
		{"a connector taken whole", `const f = ctx.files; await f.list({});`, `t.js:9:11: ctx (ctx) is used`},
		{"ctx handed to a method", `const h = { go: (c) => c.files.list({}) }; await h.go(ctx);`, `t.js:9:55: ctx (ctx) is used`},
		{"ctx handed on with call", `async function go(c) { return c.files.list({}); } await go.call(null, ctx);`, `t.js:9:71: ctx (ctx) is used`},
		{"ctx in an array", `const [c] = [ctx]; await c.files.list({});`, `t.js:9:14: ctx (ctx) is used`},
		{"ctx destructured", `const { files } = ctx; await files.list({});`, `t.js:9:19: ctx (ctx) is used`},
		{"ctx in an object", `const o = { ctx }; await o.ctx.files.list({});`, `t.js:9:13: ctx is put into an object`},
		{"a helper that takes ctx apart", `async function go({ files }) { return files.list({}); } await go(ctx);`, `t.js:9:19: this parameter takes ctx apart`},
		{"arguments of a function given ctx", `return (function () { return arguments[0]; })(ctx);`, `t.js:9:30: arguments can hand on ctx`},
		{"a rest parameter of a helper", `async function go(...a) { return a[0].files.list({}); } await go(ctx);`, `t.js:9:22: a rest parameter gathers ctx`},
		{"eval", `await eval("ctx.files.list({})");`, `t.js:9:7: eval runs code keep cannot read`},
		{"ctx reassigned", `let c = {}; c = ctx; await c.files.list({});`, `t.js:9:17: ctx (ctx) is used`},
		{"an unknown member of ctx", `await ctx.nothing();`, `t.js:9:7: ctx.nothing is not an operation or a connector method`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := handlers{producer: tt.code}.source()
			_, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("load: err = %v\nwant it to hold %s\n%s", err, tt.want, numbered(src))
			}
		})
	}
}

// Every method of every connector, spelled with computed names, is refused
// at validate; spelled plainly, each is in the manifest.
func TestEveryConnectorByComputedNameIsRefused(t *testing.T) {
	t.Parallel()
	for _, m := range testMethods {
		t.Run(m.Connector+"."+m.Method, func(t *testing.T) {
			t.Parallel()
			code := fmt.Sprintf(`const C = %q.split("").join(""), M = [%q][0]; await ctx[C][M]({});`, m.Connector, m.Method)
			_, err := Load("t.js", []byte(handlers{mutate: code}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err == nil || !strings.Contains(err.Error(), "t.js:21:") || !strings.Contains(err.Error(), "cannot follow") {
				t.Errorf("load: err = %v, want a refusal at t.js:21", err)
			}
		})
	}
}

// The manifest names each call with the phases it is written in, through
// an alias and a helper of the file handed ctx; MCP tools as mcp.NAME;
// the hosts of the URLs in the file's text; the topics.
func TestManifestNamesWhatTheFileMayDo(t *testing.T) {
	t.Parallel()
	methods := append(slices.Clone(testMethods), MethodSpec{Connector: "mcp.memory", Method: "create_entities", Kind: KindMutate},
		MethodSpec{Connector: "http", Method: "get", Kind: KindRead, Args: args("url")})
	src := `// https://comment.example/ is read too: the person reads it
const API = "https://api.example.com:8443/v1";
async function look(c, dir) { return c.files.list({ dir }); }
export default Keep.workflow({
  name: "t",
  topics: { "a": {}, "b": {} },
  producers: { p: { publishes: ["a"], schedule: { interval: "1m" }, handler: async (ctx) => {
    await look(ctx, "in");
    const c = ctx;
    await c.http.get({ url: API + "/x" });
    await ctx.http.get({ url: ` + "`http://Other.example/${1}`" + ` });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["a"], publishes: ["b"],
    async prepare(ctx) { await look(ctx, "out"); return { reservations: [], data: {} }; },
    async mutate(x) { await (async (m) => m.mcp.memory.create_entities({ entities: [] }))(x); },
    async next() {},
  }) },
});
`
	s, err := Load("t.js", []byte(src), LoadOptions{Methods: methods, MinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{
		Calls: []ManifestCall{
			{Connector: "files", Method: "list", Kind: KindRead, Phases: []Phase{PhasePrepare, PhaseProducer}},
			{Connector: "http", Method: "get", Kind: KindRead, Phases: []Phase{PhaseProducer}},
			{Connector: "mcp.memory", Method: "create_entities", Kind: KindMutate, Phases: []Phase{PhaseMutate}},
		},
		Hosts:  []string{"api.example.com:8443", "comment.example", "other.example"},
		Topics: []string{"a", "b"},
	}
	if !reflect.DeepEqual(s.Manifest, want) {
		t.Errorf("manifest\n got %s\nwant %s", s.Manifest.JSON(), want.JSON())
	}
	if !slices.Equal(s.Capabilities, []string{"mcp.memory.create_entities"}) {
		t.Errorf("capabilities %v", s.Capabilities)
	}
	if err := s.Manifest.Allows("files", "write", PhaseMutate); err == nil {
		t.Error("files.write allowed")
	}
	if err := s.Manifest.Allows("files", "list", PhaseMutate); err == nil {
		t.Error("files.list allowed in mutate")
	}
	if err := s.Manifest.Allows("files", "list", PhasePrepare); err != nil {
		t.Error(err)
	}
	for u, ok := range map[string]bool{"https://api.example.com:8443/v1/x": true, "https://api.example.com/v1": false,
		"http://other.example:9/": true, "https://evil.example/": false, "https://api.example.com:8443@evil.example/": false,
		"/relative": false, "https://comment.example/": true} {
		if err := s.Manifest.AllowsURL(u); (err == nil) != ok {
			t.Errorf("AllowsURL(%q) = %v, want allowed %v", u, err, ok)
		}
	}
}

// A consumer declared apart (consumers: { c }) is not tied to its handler
// by the walk: its calls are still named, for any phase, so the run that
// makes them is not refused. A data object with a next function is no
// consumer: what its parameter names is not judged.
func TestManifestNamesACallOfAConsumerDeclaredApart(t *testing.T) {
	t.Parallel()
	src := `const queue = { items: [], next: (q) => q.items.shift() }; queue.next(queue);
async function look(ctx) { return ctx.files.list({}); }
const c = Keep.consumer({ subscribe: ["a"],
  async prepare(k) { await look(k); return { reservations: [], data: {} }; },
  async mutate(k) { await k.files.write({ path: "x", content: "y" }); },
  async next() {} });
export default Keep.workflow({ name: "t", topics: { a: {} }, producers: { p: { publishes: ["a"], schedule: { interval: "1m" },
  handler: async (ctx) => { await look(ctx); } } }, consumers: { c } });
`
	s, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"list", "write"} {
		if err := s.Manifest.Allows("files", name, PhaseMutate); err != nil {
			t.Errorf("files.%s: %v (manifest %s)", name, err, s.Manifest.JSON())
		}
	}
}

// arguments is refused where it can hold ctx (a phase, a function given
// ctx, an arrow inside them), not in a function of its own.
func TestArgumentsIsRefusedWhereItHoldsCtx(t *testing.T) {
	t.Parallel()
	for code, refused := range map[string]bool{
		`const f = () => arguments[0]; await f().files.list({});`:                                true,
		`function log() { return Array.from(arguments).join(" "); } console.log(log("a", "b"));`: false,
	} {
		_, err := Load("t.js", []byte(handlers{prepare: code + "\nreturn { reservations: [], data: {} };"}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
		if got := err != nil && strings.Contains(err.Error(), "arguments can hand on ctx"); got != refused {
			t.Errorf("%s: err = %v, want refused %v", code, err, refused)
		}
	}
}

// The host a literal URL admits is the host a request to that URL goes
// to: the one net/url finds, as AllowsURL does. Read by a pattern of its
// own, the user in https://robot:pw@api.example.com was taken for the
// host: "robot" (or "localhost", from https://localhost:pw@...) was
// admitted on every port, and the URL as written was refused.
func TestManifestHostsAreWhereTheURLsGo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text  string
		hosts []string
	}{
		{`"https://robot:pw@api.example.com/v1"`, []string{"api.example.com"}},
		{`"https://localhost:pw@api.example.com/"`, []string{"api.example.com"}},
		{`"https://api.example.com:8443@evil.example/"`, []string{"evil.example"}},
		{`"http://[::1]:8080/x" and "http://[fe80::1]/"`, []string{"[::1]:8080", "[fe80::1]"}},
		{`"https://example.com%2eevil.org/"`, nil}, // not a URL net/url reads: admits nothing
		{"`https://${host}/x`", nil},
		{`// see https://API.example.com:8443/v1, or (https://other.example)`, []string{"api.example.com:8443", "other.example"}},
	} {
		if got := HostsIn(tt.text); !slices.Equal(got, tt.hosts) {
			t.Errorf("HostsIn(%s) = %q, want %q", tt.text, got, tt.hosts)
		}
	}

	src := `const API = "https://robot:pw@api.example.com/v1";
const LOCAL = "http://[::1]/";
export default Keep.workflow({ name: "t", topics: { a: {} },
  producers: { p: { publishes: ["a"], schedule: { interval: "1m" }, handler: async (ctx) => {
    await ctx.http.get({ url: API + "/x" });
  } } } });
`
	methods := append(slices.Clone(testMethods), MethodSpec{Connector: "http", Method: "get", Kind: KindRead, Args: args("url")})
	s, err := Load("t.js", []byte(src), LoadOptions{Methods: methods, MinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for u, ok := range map[string]bool{
		"https://robot:pw@api.example.com/v1/x": true, // the URL as written
		"https://api.example.com/v1":            true,
		"http://robot:8080/":                    false, // its user is no host
		"http://robot/":                         false,
		"http://[::1]:9000/":                    true, // an IPv6 literal without a port admits every port
		"http://[::2]/":                         false,
	} {
		if err := s.Manifest.AllowsURL(u); (err == nil) != ok {
			t.Errorf("AllowsURL(%q) = %v, want allowed %v (hosts %q)", u, err, ok, s.Manifest.Hosts)
		}
	}
}

// A phase whose function the analysis never finds is run with ctx all the
// same, and what that function calls is in no manifest: the file
// validated ("ok", no reads), and its run failed on a ctx without the
// connector. Each such phase is refused at validate, naming it; a phase
// written in place, or naming a function of the file, still loads.
func TestAPhaseTheAnalysisCannotFindIsRefused(t *testing.T) {
	t.Parallel()
	const head = `function make(dir) { return async (c) => { await c.files.list({ dir }); }; }
const impl = { run: async (c) => { await c.files.list({ dir: "x" }); } };
const list = [async (c) => { await c.files.list({ dir: "x" }); }];
async function poll(ctx) { await ctx.files.list({ dir: "x" }); }
export default Keep.workflow({ name: "t", topics: { a: {} },
  producers: { p: { publishes: ["a"], schedule: { interval: "5m" }, `
	const tail = ` } } });`
	refused := map[string]string{
		"a call that makes it":   `handler: make("in")`,
		"a method of an object":  `handler: impl.run`,
		"an element of an array": `handler: list[0]`,
		"a computed key":         `["hand" + "ler"]: async (c) => { await c.files.list({}); }`,
		"a getter":               `get handler() { return async (...a) => { await a[0].files.list({}); }; }`,
	}
	for name, phase := range refused {
		t.Run("refused: "+name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("t.js", []byte(head+phase+tail), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), "t.js:6:") ||
				!strings.Contains(err.Error(), "keep cannot see which function") && !strings.Contains(err.Error(), "handler is written as a getter") {
				t.Errorf("err = %v, want a diagnostic on line 6 saying keep cannot see the handler", err)
			}
		})
	}
	loads := map[string]string{
		"a function written in place":           `handler: async (ctx) => { await ctx.files.list({}); }`,
		"a function of the file":                `handler: poll`,
		"a function written inside a call":      `handler: (() => async (c) => { await c.files.list({}); })()`,
		"an object spread holding the function": `...{ handler: async (c) => { await c.files.list({}); } }`,
	}
	for name, phase := range loads {
		t.Run("loads: "+name, func(t *testing.T) {
			t.Parallel()
			s, err := Load("t.js", []byte(head+phase+tail), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Manifest.Call("files", "list"); !ok {
				t.Errorf("manifest %s lacks files.list", s.Manifest.JSON())
			}
		})
	}
}

// A phase written as a shorthand property ({ handler }, { prepare, mutate,
// next }) is the function of the file by that name, as handler: handler
// is: the authoring guide's first example is written so.
func TestAPhaseWrittenShorthandIsTheFunctionOfThatName(t *testing.T) {
	t.Parallel()
	src := `async function handler(ctx) { await ctx.files.list({ dir: "in" }); }
async function prepare(ctx) { await ctx.files.read({ path: "in/a" }); return { reservations: [], data: {} }; }
async function mutate(ctx) { await ctx.files.write({ path: "x", content: "y" }); }
async function next() {}
export default Keep.workflow({ name: "t", topics: { a: {} },
  producers: { p: { publishes: ["a"], schedule: { interval: "5m" }, handler } },
  consumers: { c: Keep.consumer({ subscribe: ["a"], prepare, mutate, next }) } });
`
	s, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for _, c := range []struct {
		method string
		phase  Phase
	}{{"list", PhaseProducer}, {"read", PhasePrepare}, {"write", PhaseMutate}} {
		if err := s.Manifest.Allows("files", c.method, c.phase); err != nil {
			t.Errorf("files.%s in %s: %v (manifest %s)", c.method, c.phase, err, s.Manifest.JSON())
		}
	}
	if err := s.Manifest.Allows("files", "write", PhasePrepare); err == nil {
		t.Errorf("files.write allowed in prepare (manifest %s)", s.Manifest.JSON())
	}
}
