package reference

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"keep/connectors"
	"keep/sandbox"
)

// Problems lists what is missing or wrong in the documentation of the
// registry's methods: a description, argument names and types, a result
// type, how a mutation is reconciled, an example — and an example that does
// not load, wrapped in the smallest workflow whose phase may make the call,
// through the same validator `keep validate` uses. Empty means complete.
func Problems(reg *connectors.Registry) []string {
	methods := Methods(reg)
	var out []string
	bad := func(conn, method, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s.%s: %s", conn, method, fmt.Sprintf(format, args...)))
	}
	for _, name := range reg.Names() {
		c, _ := reg.Get(name)
		if c.Name() != name {
			continue // an alias shares the methods of its connector
		}
		for _, m := range c.Methods() {
			if strings.TrimSpace(m.Doc) == "" {
				bad(name, m.Name, "no description (Doc)")
			}
			if strings.TrimSpace(m.Result) == "" {
				bad(name, m.Name, "no result type (Result)")
			}
			for i, a := range m.Args {
				if strings.TrimSpace(a.Name) == "" || strings.TrimSpace(a.TS()) == "" {
					bad(name, m.Name, "argument %d has no name or no type (%q: %q)", i+1, a.Name, a.TS())
				}
				if a.Type != "" && len(a.Fields) > 0 {
					// the printed type and the checked fields would be two
					// declarations, free to disagree
					bad(name, m.Name, "argument %s declares its Fields and a Type: leave Type to them", a.Name)
				}
			}
			if m.Kind == connectors.Mutate && strings.TrimSpace(m.Reconcile) == "" {
				bad(name, m.Name, "a mutation that does not say how its outcome is reconciled (Reconcile)")
			}
			if strings.TrimSpace(m.Example) == "" {
				bad(name, m.Name, "no example")
				continue
			}
			if !callsItself(reg, name, m.Name, m.Example) {
				bad(name, m.Name, "the example does not call ctx.%s.%s: %s", name, m.Name, m.Example)
			}
			src := Wrap(m.Kind, m.Example)
			if _, err := sandbox.Load(name+"."+m.Name+".example.js", []byte(src), sandbox.LoadOptions{Methods: methods}); err != nil {
				bad(name, m.Name, "the example does not validate: %v", err)
			}
		}
	}
	return out
}

// Methods is the registry's catalog as the sandbox takes it: the same
// names, kinds and argument types keep.d.ts is written from, so `keep
// validate` checks what an editor checks.
func Methods(reg *connectors.Registry) []sandbox.MethodSpec {
	var out []sandbox.MethodSpec
	for _, m := range reg.Catalog() {
		spec := sandbox.MethodSpec{Connector: m.Connector, Method: m.Method, Kind: sandbox.MethodKind(m.Kind), OpenArgs: m.OpenArgs, Uncallable: m.Uncallable}
		spec.Args = argSpecs(m.Args)
		out = append(out, spec)
	}
	return out
}

// argSpecs are args as the sandbox takes them, declared fields and all.
func argSpecs(args []connectors.Arg) []sandbox.ArgSpec {
	var out []sandbox.ArgSpec
	for _, a := range args {
		out = append(out, sandbox.ArgSpec{Name: a.Name, Type: a.TS(), Required: a.Required, Fields: argSpecs(a.Fields)})
	}
	return out
}

// LoadOptions are the options to load a workflow file with against reg:
// its methods with their argument types, its input sources and its files
// roots (a watched folder must be under one).
func LoadOptions(reg *connectors.Registry, minInterval time.Duration) sandbox.LoadOptions {
	sources := map[string][]string{}
	for _, s := range reg.Sources() {
		sources[s.Name] = s.Types
	}
	watch := func(dir string) error { _, err := WatchFolder(reg, dir); return err }
	return sandbox.LoadOptions{Methods: Methods(reg), MinInterval: minInterval, Sources: sources, WatchFolder: watch}
}

var exampleCall = regexp.MustCompile(`\bctx\s*\.\s*([A-Za-z_$][\w$]*)\s*\.\s*([A-Za-z_$][\w$]*)\s*\(`)

// callsItself reports whether an example calls the method it documents,
// under the connector's name or one of its aliases.
func callsItself(reg *connectors.Registry, conn, method, example string) bool {
	want, _ := reg.Get(conn)
	for _, m := range exampleCall.FindAllStringSubmatch(example, -1) {
		if got, ok := reg.Get(m[1]); ok && got.Name() == want.Name() && m[2] == method {
			return true
		}
	}
	return false
}

// Wrap puts one example line into a minimal workflow: a read in a
// producer's handler, a mutation in a consumer's mutate, where the sandbox
// allows each.
func Wrap(kind connectors.Kind, example string) string {
	if kind == connectors.Mutate {
		return `export default Keep.workflow({
  name: "example",
  topics: { "t": {} },
  consumers: {
    c: Keep.consumer({
      subscribe: ["t"],
      async prepare(ctx, state) { return { reservations: [], data: {} }; },
      async mutate(ctx, prepared) {
` + example + `
      },
      async next(ctx, prepared, mutationResult) {},
    }),
  },
});
`
	}
	return `export default Keep.workflow({
  name: "example",
  topics: { "t": {} },
  producers: {
    p: {
      publishes: ["t"],
      schedule: { interval: "1h" },
      handler: async (ctx, state) => {
` + example + `
      },
    },
  },
});
`
}
