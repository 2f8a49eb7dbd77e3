package reference

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"keep/sandbox"
)

// DTS renders keep.d.ts: the global Keep object, ctx per phase (a phase's
// ctx has only what the phase may call, so a read in mutate is a type
// error), and every connector method with typed arguments and result.
func (r Ref) DTS() string {
	var b strings.Builder
	b.WriteString("// keep.d.ts — declarations for keep workflow files, generated from keep's own connector\n")
	b.WriteString("// registry and phase rules (`keep help api` is the same reference as text). Do not edit it:\n")
	b.WriteString("// `keep init` (with DIR, or --config, as for the first one) writes it again, for this keep\n")
	b.WriteString("// and the config's MCP servers, and leaves the config and the workflows as they are.\n\n")
	b.WriteString("declare namespace Keep {\n")
	b.WriteString(`  interface Event<P = any> {
    messageId: string;
    payload: P;
    createdAt: string;
  }
  interface Reservation {
    topic: string;
    ids: string[];
  }
  /** What prepare returns; mutate and next get it back as prepared. */
  interface Prepared<D = any> {
    reservations: Reservation[];
    data: D;
    ui?: { title?: string };
    /** An ISO time at which prepare runs again. */
    wakeAt?: string;
  }
  type MutationResult =
    | { status: "applied"; result: any }
    | { status: "none" }
    | { status: "skipped" };
`)
	b.WriteString(scheduleType())
	var sources []string
	for _, s := range r.Sources {
		sources = append(sources, quote(s.Name))
	}
	if len(sources) == 0 {
		sources = []string{"string"}
	}
	fmt.Fprintf(&b, "  type InputSource = %s;\n", strings.Join(sources, " | "))

	// One interface of reads and one of mutations per connector; aliases
	// point at the connector's.
	type half struct{ reads, mutations string }
	halves := map[string]half{}
	for _, c := range r.Connectors {
		if c.AliasOf != "" {
			continue
		}
		var h half
		reads, muts := &strings.Builder{}, &strings.Builder{}
		for _, m := range c.Methods {
			dst := reads
			if m.Kind == "mutate" {
				dst = muts
			}
			writeDTSMethod(dst, c.Name, m)
		}
		if reads.Len() > 0 {
			h.reads = typeName(c.Name) + "Reads"
			fmt.Fprintf(&b, "\n  interface %s {\n%s  }\n", h.reads, reads.String())
		}
		if muts.Len() > 0 {
			h.mutations = typeName(c.Name) + "Mutations"
			fmt.Fprintf(&b, "\n  interface %s {\n%s  }\n", h.mutations, muts.String())
		}
		halves[c.Name] = h
	}
	connectorsOf := func(pick func(half) string) string {
		var s strings.Builder
		nested := map[string]*strings.Builder{} // "mcp.NAME" is ctx.mcp.NAME
		var spaces []string
		for _, c := range r.Connectors {
			base := c.Name
			if c.AliasOf != "" {
				base = c.AliasOf
			}
			t := pick(halves[base])
			if t == "" {
				continue
			}
			if ns, rest, ok := strings.Cut(c.Name, "."); ok {
				if nested[ns] == nil {
					nested[ns] = &strings.Builder{}
					spaces = append(spaces, ns)
				}
				fmt.Fprintf(nested[ns], "      %s: %s;\n", propName(rest), t)
				continue
			}
			fmt.Fprintf(&s, "    %s: %s;\n", c.Name, t)
		}
		for _, ns := range spaces {
			fmt.Fprintf(&s, "    %s: {\n%s    };\n", ns, nested[ns].String())
		}
		return s.String()
	}
	opsOf := func(phase string) string {
		var s strings.Builder
		for _, op := range r.Operations {
			if op.Name == "console" || !slices.Contains(op.Phases, phase) {
				continue
			}
			fmt.Fprintf(&s, "    /** %s\n     * @example %s */\n    %s%s;\n", jsdoc(op.Doc), jsdoc(op.Example), op.Name, op.Signature)
		}
		return s.String()
	}
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "\n  /** ctx in %s: %s */\n  interface %sCtx {\n", p.Name, jsdoc(p.Doc), typeName(p.Name))
		b.WriteString(opsOf(p.Name))
		if slices.Contains(phaseNames(sandbox.PhaseOfKind(sandbox.KindRead)), p.Name) {
			b.WriteString(connectorsOf(func(h half) string { return h.reads }))
		}
		if slices.Contains(phaseNames(sandbox.PhaseOfKind(sandbox.KindMutate)), p.Name) {
			b.WriteString(connectorsOf(func(h half) string { return h.mutations }))
		}
		b.WriteString("  }\n")
	}
	b.WriteString(`
  interface Producer {
    publishes: string[];
    schedule: Schedule;
    handler(ctx: ProducerCtx, state: any): any;
  }
  interface Consumer {
    subscribe: string[];
    publishes?: string[];
    /** Runs under way at once, each on its own reservations, a whole number
     * from 1 to 64 (default 1). Order across them is not promised, and each
     * reads the state as the last run to commit left it. */
    concurrency?: number;
    prepare(ctx: PrepareCtx, state: any): Prepared | Promise<Prepared>;
    mutate(ctx: MutateCtx, prepared: Prepared): any;
    next(ctx: NextCtx, prepared: Prepared, mutationResult: MutationResult): any;
  }
  interface Workflow {
    name: string;
    topics: Record<string, {}>;
    producers?: Record<string, Producer>;
    consumers?: Record<string, Consumer>;
  }
}

declare const Keep: {
  workflow(workflow: Keep.Workflow): Keep.Workflow;
  consumer(consumer: Keep.Consumer): Keep.Consumer;
};

/** Lines go to the run's trace (keep logs WORKFLOW). */
declare const console: {
  log(...values: any[]): void;
  info(...values: any[]): void;
  warn(...values: any[]): void;
  error(...values: any[]): void;
  debug(...values: any[]): void;
};
`)
	return b.String()
}

// JSConfig is the jsconfig.json that makes an editor check workflow files
// in its folder against keep.d.ts (no DOM, no Node: the sandbox has neither).
const JSConfig = `{
  "compilerOptions": {
    "checkJs": true,
    "allowJs": true,
    "noEmit": true,
    "target": "ES2022",
    "module": "ES2022",
    "moduleResolution": "bundler",
    "lib": ["ES2022"],
    "types": []
  },
  "include": ["*.js", "*.ts", "keep.d.ts"]
}
`

func writeDTSMethod(b *strings.Builder, conn string, m Method) {
	doc := m.Doc
	if m.Reconcile != "" {
		doc += " Outcome unknown? " + m.Reconcile
	}
	fmt.Fprintf(b, "    /** %s\n     * @example %s */\n", jsdoc(doc), jsdoc(m.Example))
	result := orAny(m.Result)
	switch {
	case len(m.Args) == 0 && m.Doc == "":
		// undocumented: accept anything rather than reject a working script
		fmt.Fprintf(b, "    %s(args?: Record<string, any>): Promise<%s>;\n", propName(m.Name), result)
	case len(m.Args) == 0:
		fmt.Fprintf(b, "    %s(args?: {}): Promise<%s>;\n", propName(m.Name), result)
	default:
		opt := "?"
		for _, a := range m.Args {
			if a.Required {
				opt = ""
			}
		}
		fmt.Fprintf(b, "    %s(args%s: {\n", propName(m.Name), opt)
		for _, a := range m.Args {
			if a.Doc != "" {
				fmt.Fprintf(b, "      /** %s */\n", jsdoc(a.Doc))
			}
			fmt.Fprintf(b, "      %s%s: %s;\n", a.Name, optional(a), orAny(a.Type))
		}
		fmt.Fprintf(b, "    }): Promise<%s>;\n", result)
	}
}

// typeName is "files" → "Files", "read_by_id" → "ReadById".
// propName is a method or property name as TypeScript takes it: quoted
// when it is no identifier (MCP tools are often named "get-sum").
func propName(s string) string {
	if jsIdent.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// memberOf is .name, or ["get-env"] for a name that is no identifier.
func memberOf(s string) string {
	if jsIdent.MatchString(s) {
		return "." + s
	}
	return "[" + strconv.Quote(s) + "]"
}

var jsIdent = regexp.MustCompile(`^[A-Za-z_$][\w$]*$`)

func typeName(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' || r == '-' || r == '.' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// jsdoc keeps text from closing the comment it sits in.
func jsdoc(s string) string { return strings.ReplaceAll(s, "*/", "*\\/") }
