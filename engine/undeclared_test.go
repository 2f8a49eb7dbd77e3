package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// spied stands for a registered connector, methods and all, and records
// every call that reaches it instead of making it.
type spied struct {
	connectors.Connector
	name string
	mu   *sync.Mutex
	got  map[string]int
}

func (s spied) Name() string { return s.name }

func (s spied) Do(ctx context.Context, call connectors.Call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[s.name+"."+call.Method]++
	return nil, connectors.Errorf(connectors.Logic, "the spy took %s.%s", s.name, call.Method)
}

// openTool is a method whose contract takes fields beyond its Args (an MCP
// tool whose schema allows them): its calls are not refused.
type openTool struct{}

func (openTool) Name() string { return "open" }
func (openTool) Methods() []connectors.Method {
	return []connectors.Method{{Name: "echo", Kind: connectors.Read, OpenArgs: true, Doc: "Echoes.",
		Args: []connectors.Arg{{Name: "text", Type: "string"}}}}
}
func (openTool) Do(context.Context, connectors.Call) (any, error) { panic("spied") }

// A call holding a field its method does not declare is refused before the
// connector sees it, for every registered connector and method alike: the
// guarantee rests on the one place calls go out, not on each connector's
// own check, so a connector added later has it too. Each method is called
// with a field of each of its Args and one more, built at run time so that
// validate (which refuses such a literal) lets the script deploy.
func TestEveryConnectorRefusesAnUndeclaredField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{dir}
	cfg.Connectors.Sheets.Roots = []string{dir}
	allowMutations(&cfg)
	clock := kit.NewClock(time.Time{})
	real, err := Connectors(cfg, ConnectorOpts{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{}
	reg := connectors.NewRegistry()
	for _, name := range real.Names() {
		c, _ := real.Get(name)
		reg.Register(spied{Connector: c, name: name, mu: &mu, got: got})
	}
	reg.Register(spied{Connector: openTool{}, name: "open", mu: &mu, got: got})
	for _, src := range real.Sources() {
		reg.AddSource(src.Name, src.Types...)
	}
	db, err := storage.Open(ctx, storage.Opts{Path: dir + "/keep.db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, clock: clock, db: db, cfg: cfg}
	if b.e, err = New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(cfg.Policy), Now: clock.Now}); err != nil {
		t.Fatal(err)
	}

	type want struct{ wf, call, refusal string }
	var wants []want
	for i, m := range reg.Catalog() {
		if m.Uncallable != "" || m.OpenArgs {
			continue
		}
		params := map[string]any{"notDeclared": true}
		var names []string
		for _, a := range m.Args {
			params[a.Name] = valueOf(a.Name, a.TS())
			names = append(names, a.Name)
		}
		takes := "(it takes nothing)"
		if len(names) > 0 {
			takes = "(it takes: " + strings.Join(names, ", ") + ")"
		}
		raw, _ := json.Marshal(params)
		call := fmt.Sprintf("await ctx%s(JSON.parse(%s));", members(m.Connector, m.Method), strconv.Quote(string(raw)))
		wf := fmt.Sprintf("u%d", i)
		w := want{wf: wf, call: m.Connector + "." + m.Method,
			refusal: fmt.Sprintf("%s.%s takes no notDeclared %s", m.Connector, m.Method, takes)}
		if m.Kind == connectors.Mutate {
			b.deploy(wf, fanWorkflow(wf, `["i0"]`, 1, call))
		} else {
			b.deploy(wf, readWorkflow(wf, call))
		}
		wants = append(wants, w)
	}
	b.deploy("open", readWorkflow("open", `await ctx.open.echo({ text: "a", more: 1 });`))
	b.drain()

	if len(wants) < 30 {
		t.Fatalf("%d methods called: the registry lost its connectors", len(wants))
	}
	for _, w := range wants {
		if n := got[w.call]; n > 0 {
			t.Errorf("%s: a call with an undeclared field reached the connector %d times", w.call, n)
		}
		refused := false
		for _, r := range b.runs(w.wf) {
			refused = refused || r.Status == storage.RunFailedLogic && strings.Contains(r.Error, w.refusal)
		}
		if !refused {
			t.Errorf("%s: no run failed with %q: %+v", w.call, w.refusal, b.runs(w.wf))
		}
		// refused before its in_flight row: there is nothing to reconcile
		if ms := b.mutations(w.wf); len(ms) != 0 {
			t.Errorf("%s: the refused call left mutations %+v", w.call, ms)
		}
	}
	if got["open.echo"] != 1 {
		t.Errorf("open.echo, whose contract takes more fields, was called %d times, want 1", got["open.echo"])
	}
}

// readWorkflow is a producer that makes one call when it runs.
func readWorkflow(name, call string) string {
	return `export default Keep.workflow({
  name: "` + name + `",
  topics: { item: {} },
  producers: { p: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => { ` + call + ` } } },
});`
}

// members is how a script names connector.method: ctx.mcp.NAME.TOOL for an
// MCP server's tool.
func members(conn, method string) string {
	path := strings.Split(conn, ".")
	out := ""
	for _, p := range append(path, method) {
		if ident.MatchString(p) {
			out += "." + p
		} else {
			out += "[" + strconv.Quote(p) + "]"
		}
	}
	return out
}

var ident = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// valueOf is a value of a declared TypeScript type, as far as a test needs
// one: the refusal comes before the connector reads any. A URL is one the
// script names, so that the manifest lets it through to the refusal.
func valueOf(name, typ string) any {
	switch {
	case strings.Contains(strings.ToLower(name), "url"):
		return "https://example.com/"
	case typ == "number":
		return 1
	case typ == "boolean":
		return false
	case strings.HasSuffix(typ, "[]") || strings.HasPrefix(typ, "Array<"):
		return []any{}
	case strings.HasPrefix(typ, "{") || strings.HasPrefix(typ, "Record<"):
		return map[string]any{}
	}
	return "x"
}

// A typo in an http.request's fields (methd for method, jsn for json) once
// sent a GET with no body to a real service: the connector read the fields
// it knew and dropped the rest. The call is refused, naming the field and
// the ones it takes, and nothing reaches the service; the same call spelt
// right does.
func TestHTTPRequestTypoSendsNothing(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+string(body))
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	b := setup(t, allowMutations)
	typos := map[string]string{
		"methd": `{"methd": "POST", "url": "` + srv.URL + `/a", "json": {"n": 1}}`,
		"jsn":   `{"method": "POST", "url": "` + srv.URL + `/b", "jsn": {"n": 1}}`,
	}
	for typo, params := range typos {
		b.deploy(typo, fanWorkflow(typo, `["i0"]`, 1, `await ctx.http.request(JSON.parse(`+strconv.Quote(params)+`));`))
	}
	b.deploy("right", fanWorkflow("right", `["i0"]`, 1, `await ctx.http.request({ method: "POST", url: "`+srv.URL+`/c", json: { n: 1 } });`))
	b.drain()

	mu.Lock()
	defer mu.Unlock()
	if want := []string{`POST /c {"n":1}`}; !slices.Equal(got, want) {
		t.Errorf("the service got %q, want only %q", got, want)
	}
	for typo := range typos {
		refusal := "http.request takes no " + typo + " (it takes: method, url, headers, json, body, reconcile)"
		refused := false
		for _, r := range b.runs(typo) {
			refused = refused || r.Status == storage.RunFailedLogic && strings.Contains(r.Error, refusal)
		}
		if !refused {
			t.Errorf("%s: no run failed with %q: %+v", typo, refusal, b.runs(typo))
		}
		if ms := b.mutations(typo); len(ms) != 0 {
			t.Errorf("%s: the refused call left mutations %+v", typo, ms)
		}
	}
}

// A typo inside reconcile (urll for url) once sent the POST and, its
// outcome unknown, left the host no URL to check it by: the person was
// asked about a call its author believed checkable. Built at run time, so
// that validate cannot see it, the call is refused before its in_flight
// row, naming the field and the ones reconcile takes, and nothing reaches
// the service; as is a reconcile that is no object or lacks its url. The
// same call spelt right is sent.
func TestHTTPReconcileTypoSendsNothing(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	b := setup(t, allowMutations)
	item := strconv.Quote(srv.URL + "/items/1")
	call := func(path, reconcile string) string {
		return `const at = ` + item + `; await ctx.http.request({ method: "POST", url: "` + srv.URL + path + `", json: { n: 1 }, reconcile: ` + reconcile + ` });`
	}
	refusals := map[string]struct{ call, refusal string }{
		"urll": {call("/a", `{ ["ur" + "ll"]: at }`),
			"http.request takes no reconcile.urll (reconcile takes: url)"},
		"string": {call("/b", `[at].join("")`),
			"http.request reconcile must be an object { url: string }, not a string"},
		"empty": {call("/c", `Object.fromEntries([])`),
			"http.request reconcile needs url"},
	}
	for wf, r := range refusals {
		b.deploy(wf, fanWorkflow(wf, `["i0"]`, 1, r.call))
	}
	b.deploy("right", fanWorkflow("right", `["i0"]`, 1, call("/d", `{ url: at }`)))
	b.drain()

	mu.Lock()
	defer mu.Unlock()
	if want := []string{"POST /d"}; !slices.Equal(got, want) {
		t.Errorf("the service got %q, want only %q", got, want)
	}
	for wf, r := range refusals {
		refused := false
		for _, run := range b.runs(wf) {
			refused = refused || run.Status == storage.RunFailedLogic && strings.Contains(run.Error, r.refusal)
		}
		if !refused {
			t.Errorf("%s: no run failed with %q: %+v", wf, r.refusal, b.runs(wf))
		}
		if ms := b.mutations(wf); len(ms) != 0 {
			t.Errorf("%s: the refused call left mutations %+v", wf, ms)
		}
	}
}

// A field a method declares it refuses is refused with its reason, not
// the plain list: an occurrence's recurrenceId passed to calendar.update
// or delete would act on every occurrence, and the script is told so.
func TestARefusedFieldSaysWhy(t *testing.T) {
	reg, err := Connectors(config.Default(), ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, method := range []string{"update", "delete"} {
		_, _, err := reg.Resolve("calendar", method, map[string]any{"uid": "u1", "recurrenceId": "20261124T083000Z"})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(fmt.Sprint(err), "calendar."+method+" acts on every occurrence of the event and cannot take recurrenceId") {
			t.Errorf("calendar.%s with recurrenceId: %v, want the reason it cannot take it", method, err)
		}
	}
	if _, _, err := reg.Resolve("calendar", "delete", map[string]any{"uid": "u1", "recurence": "x"}); !strings.Contains(fmt.Sprint(err), "calendar.delete takes no recurence (it takes: uid)") {
		t.Errorf("a field without a reason: %v, want the plain refusal", err)
	}
}
