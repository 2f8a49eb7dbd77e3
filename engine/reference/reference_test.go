package reference_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine"
	"keep/engine/config"
	"keep/engine/reference"
	"keep/sandbox"
)

// defaultRegistry is the registry every keep builds from a default config:
// connectors merged in later are checked by the same tests.
func defaultRegistry(t *testing.T) *connectors.Registry {
	t.Helper()
	reg, err := engine.Connectors(config.Default(), engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestEveryRegisteredMethodIsDocumented(t *testing.T) {
	for _, p := range reference.Problems(defaultRegistry(t)) {
		t.Error(p)
	}
}

// fake is a connector whose documentation is as bad as it gets.
type fake struct{ methods []connectors.Method }

func (f fake) Name() string                                   { return "fake" }
func (f fake) Methods() []connectors.Method                   { return f.methods }
func (fake) Do(context.Context, connectors.Call) (any, error) { return nil, nil }

func TestProblemsNamesWhatIsMissing(t *testing.T) {
	reg := connectors.NewRegistry()
	reg.Register(fake{methods: []connectors.Method{
		{Name: "bare", Kind: connectors.Read},
		{Name: "untyped", Kind: connectors.Read, Doc: "d", Result: "any", Args: []connectors.Arg{{Name: "x"}},
			Example: `await ctx.fake.untyped({ x: 1 })`},
		{Name: "unreconciled", Kind: connectors.Mutate, Doc: "d", Result: "any", Example: `await ctx.fake.unreconciled()`},
		{Name: "broken", Kind: connectors.Read, Doc: "d", Result: "any", Example: `await ctx.fake.broken({ x: )`},
		{Name: "elsewhere", Kind: connectors.Read, Doc: "d", Result: "any", Example: `await ctx.fake.bare()`},
		{Name: "unknown", Kind: connectors.Read, Doc: "d", Result: "any", Example: `await ctx.fake.unknown(); await ctx.nope.x()`},
		{Name: "fine", Kind: connectors.Mutate, Doc: "d", Result: "any", Reconcile: "r", Example: `await ctx.fake.fine({})`},
	}}, "alias")
	got := strings.Join(reference.Problems(reg), "\n")
	for _, want := range []string{
		"fake.bare: no description", "fake.bare: no result type", "fake.bare: no example",
		"fake.untyped: argument 1 has no name or no type",
		"fake.unreconciled: a mutation that does not say how its outcome is reconciled",
		"fake.broken: the example does not validate",
		"fake.elsewhere: the example does not call ctx.fake.elsewhere",
		"fake.unknown: the example does not validate",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fake.fine") || strings.Contains(got, "alias.") {
		t.Errorf("a complete method (or an alias) was reported:\n%s", got)
	}
}

func TestTextShowsPhasesOperationsAndEveryMethod(t *testing.T) {
	reg := defaultRegistry(t)
	var b bytes.Buffer
	if err := reference.Build(reg).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, op := range sandbox.Operations() {
		if !strings.Contains(text, op.Name) || !strings.Contains(text, op.Example) {
			t.Errorf("the text lacks operation %s or its example", op.Name)
		}
	}
	for _, p := range sandbox.Phases() {
		if !strings.Contains(text, "  "+string(p)+"(ctx, ") {
			t.Errorf("the text lacks phase %s", p)
		}
	}
	for _, m := range reg.Catalog() {
		c, _ := reg.Get(m.Connector)
		if c.Name() != m.Connector {
			if !strings.Contains(text, "ctx."+m.Connector+" — the "+c.Name()+" connector") {
				t.Errorf("the text does not say %s is %s", m.Connector, c.Name())
			}
			continue
		}
		if !strings.Contains(text, "ctx."+m.Connector+"."+m.Method+"(") {
			t.Errorf("the text lacks ctx.%s.%s", m.Connector, m.Method)
		}
	}
	// which phase may call what: a read is not offered in mutate, a mutation only there
	if !strings.Contains(text, "ctx.files.write({ path: string, content: string }) → { path: string, size: number }\n      mutate, in mutate\n") {
		t.Errorf("files.write's kind, phases or types are not shown:\n%s", section(text, "ctx.files.write"))
	}
	if !strings.Contains(text, "ctx.files.list({ dir?: string, glob?: string, unfinished?: boolean })") ||
		!strings.Contains(section(text, "ctx.files.list({ dir?"), "read, in producer, prepare") {
		t.Errorf("files.list is not shown as a read of producer and prepare:\n%s", section(text, "ctx.files.list({ dir?"))
	}
	if !strings.Contains(section(text, "ctx.files.append({ path: string"), "outcome unknown? reads the file") {
		t.Errorf("files.append does not say how it is reconciled:\n%s", section(text, "ctx.files.append({ path: string"))
	}
}

func section(text, from string) string {
	i := strings.Index(text, from)
	if i < 0 {
		return "(missing)"
	}
	end := strings.Index(text[i:], "\n\n")
	if end < 0 {
		return text[i:]
	}
	return text[i : i+end]
}

func TestOnlyOneConnector(t *testing.T) {
	ref := reference.Build(defaultRegistry(t))
	one, err := ref.Only("slack")
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Connectors) != 1 || one.Connectors[0].Name != "slack" || len(one.Phases) == 0 {
		t.Fatalf("Only(slack) = %+v", one.Connectors)
	}
	if _, err := ref.Only("nosuch"); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Fatalf("Only(nosuch) = %v, want an error listing the known connectors", err)
	}
}

func TestJSONRoundTrips(t *testing.T) {
	ref := reference.Build(defaultRegistry(t))
	raw, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Connectors []struct {
			Name    string `json:"name"`
			Methods []struct {
				Name    string `json:"name"`
				Kind    string `json:"kind"`
				Example string `json:"example"`
				Args    []struct {
					Type string `json:"type"`
				} `json:"args"`
			} `json:"methods"`
		} `json:"connectors"`
		Phases []struct {
			Name   string   `json:"name"`
			Allows []string `json:"allows"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Connectors) != len(ref.Connectors) || len(back.Phases) != 4 {
		t.Fatalf("json has %d connectors, %d phases", len(back.Connectors), len(back.Phases))
	}
	for _, p := range back.Phases {
		if p.Name == "mutate" && strings.Contains(strings.Join(p.Allows, ","), "ctx.publish") {
			t.Errorf("mutate allows ctx.publish: %v", p.Allows)
		}
	}
}

// TestTheFileIsShownWhole: the reference shows a whole workflow file, every
// declaration in place, and that file validates against the connectors
// the reference lists.
func TestTheFileIsShownWhole(t *testing.T) {
	reg := defaultRegistry(t)
	ref := reference.Build(reg)
	var b bytes.Buffer
	if err := ref.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	i, j := strings.Index(text, "THE FILE\n"), strings.Index(text, "\nPRODUCER SCHEDULES\n")
	if i < 0 || j < i {
		t.Fatalf("the reference has no THE FILE before its schedules:\n%s", text)
	}
	file := text[i:j]
	for _, want := range []string{"Keep.workflow({", "topics:", "publishes:", "schedule:", "handler:",
		"Keep.consumer({", "subscribe:", "concurrency", "prepare(ctx", "mutate(ctx", "next(ctx"} {
		if !strings.Contains(file, want) {
			t.Errorf("the reference's file lacks %q:\n%s", want, file)
		}
	}
	if _, err := sandbox.Load("file.js", []byte(ref.File), sandbox.LoadOptions{Methods: reference.Methods(reg)}); err != nil {
		t.Errorf("the reference's file does not validate: %v\n%s", err, ref.File)
	}
}
