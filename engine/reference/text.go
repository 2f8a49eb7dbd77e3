package reference

import (
	"fmt"
	"io"
	"strings"
)

// WriteText renders the reference for a person: phases, ctx operations,
// input sources, then every connector method.
func (r Ref) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("keep scripting reference\n\n")
	b.WriteString("A workflow is `export default Keep.workflow({ name, topics, producers, consumers })`.\n")
	b.WriteString("Every handler gets ctx; what ctx may do depends on the phase. Arguments are one object;\n")
	b.WriteString("every call may be awaited. `?` marks an optional field.\n\n")

	b.WriteString("THE FILE\n\n")
	for _, line := range strings.Split(strings.TrimRight(r.File, "\n"), "\n") {
		b.WriteString(strings.TrimRight("  "+line, " ") + "\n")
	}
	b.WriteString("\n")

	b.WriteString("PRODUCER SCHEDULES\n\n")
	for _, s := range r.Schedules {
		fmt.Fprintf(&b, "  schedule: %s\n", s.Form)
		wrap(&b, s.Doc, "      ")
		b.WriteString("\n")
	}

	b.WriteString("PHASES\n\n")
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "  %s(ctx, %s) → %s\n", p.Name, p.Args, p.Returns)
		wrap(&b, p.Doc, "      ")
		fmt.Fprintf(&b, "      may use: %s\n\n", strings.Join(p.Allows, ", "))
	}

	b.WriteString("CTX OPERATIONS\n\n")
	for _, op := range r.Operations {
		name := "ctx." + op.Name
		if op.Name == "console" {
			name = "console.log / info / warn / error / debug"
		}
		fmt.Fprintf(&b, "  %s%s\n", name, op.Signature)
		fmt.Fprintf(&b, "      phases: %s", strings.Join(op.Phases, ", "))
		if op.Refused != "" && len(op.Phases) < len(r.Phases) {
			fmt.Fprintf(&b, " (elsewhere it ends the run: %s)", op.Refused)
		}
		b.WriteString("\n")
		wrap(&b, op.Doc, "      ")
		fmt.Fprintf(&b, "      e.g. %s\n\n", op.Example)
	}

	b.WriteString("INPUT SOURCES (ctx.registerInput source: types)\n\n")
	for _, s := range r.Sources {
		fmt.Fprintf(&b, "  %s: %s\n", s.Name, strings.Join(s.Types, ", "))
	}
	b.WriteString("\n")

	b.WriteString("CONNECTORS\n")
	for _, c := range r.Connectors {
		if c.AliasOf != "" {
			fmt.Fprintf(&b, "\n  ctx.%s — the %s connector under another name, with the same methods\n", c.Name, c.AliasOf)
			continue
		}
		for _, m := range c.Methods {
			writeMethod(&b, c.Name, m)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMethod(b *strings.Builder, conn string, m Method) {
	// as a script writes it: ctx.mcp.everything["get-env"] for a tool
	// whose name is no identifier
	fmt.Fprintf(b, "\n  ctx.%s%s(%s) → %s\n", conn, memberOf(m.Name), argsInline(m.Args), orAny(m.Result))
	fmt.Fprintf(b, "      %s, in %s\n", m.Kind, strings.Join(m.Phases, ", "))
	wrap(b, m.Doc, "      ")
	for _, a := range m.Args {
		req := "optional"
		if a.Required {
			req = "required"
		}
		line := fmt.Sprintf("%s: %s, %s", a.Name, a.Type, req)
		if a.Doc != "" {
			line += " — " + a.Doc
		}
		wrap(b, line, "        ")
	}
	if m.Reconcile != "" {
		wrap(b, "outcome unknown? "+m.Reconcile, "      ")
	}
	fmt.Fprintf(b, "      e.g. %s\n", m.Example)
}

// argsInline is the argument object as one TypeScript type.
func argsInline(args []Arg) string {
	if len(args) == 0 {
		return ""
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Name + optional(a) + ": " + orAny(a.Type)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func optional(a Arg) string {
	if a.Required {
		return ""
	}
	return "?"
}

func orAny(t string) string {
	if strings.TrimSpace(t) == "" {
		return "any"
	}
	return t
}

// wrap writes text indented, broken at words before 100 columns.
func wrap(b *strings.Builder, text, indent string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > 100 {
			b.WriteString(line + "\n")
			line = indent + "  "
		}
		if len(line) > len(indent) && line != indent+"  " {
			line += " "
		}
		line += word
	}
	if strings.TrimSpace(line) != "" {
		b.WriteString(line + "\n")
	}
}
