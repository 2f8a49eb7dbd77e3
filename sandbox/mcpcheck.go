package sandbox

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
)

// mcpCall checks a call of an MCP tool as `keep validate` sees it written,
// ctx.mcp.NAME.TOOL(…) or ctx.mcp.NAME["TOOL"](…) for a tool whose name is
// no identifier (a string key is a literal name, as good as a dot): the
// server has the tool, the phase rules hold (with how to make a tool a read
// when it is a mutation only because the config does not list it), and the
// literal arguments fit the tool's input schema, required ones present. It
// reports whether it judged the call: an unknown server or tool written
// with dots it leaves to ctxCall (static.go).
func (c *callChecker) mcpCall(call *ast.CallExpression, sc scope) bool {
	server, tool, bracketed, ok := mcpCallee(call.Callee, sc.ctx)
	if !ok {
		return false
	}
	start := int(call.Idx0())
	conn := "mcp." + server
	op := "ctx.mcp" + member(server) + member(tool)
	// an unknown server or tool written with dots is ctxCall's to report
	// (static.go), in the words every connector's unknown method has
	tools, known := c.specs[conn]
	if !known {
		if !bracketed {
			return false
		}
		c.add(start, "%s: keep knows no tools of mcp.%s: configure [mcp.%s], or list its tools with: keep mcp tools %s", op, server, server, server)
		return true
	}
	spec, ok := tools[tool]
	if !ok {
		if !bracketed {
			return false
		}
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		sort.Strings(names)
		c.add(start, "%s: mcp.%s has no tool %q (it has: %s)", op, server, tool, strings.Join(names, ", "))
		return true
	}
	if spec.Uncallable != "" {
		c.add(start, "%s cannot be called: %s", op, spec.Uncallable)
		return true
	}
	if sc.phase != "" {
		if r := kindRule(spec.Kind, sc.phase); !slices.Contains(r.phases, sc.phase) {
			if spec.Kind == KindMutate {
				c.add(start, "%s is a mutation and is called in %s: %s. keep treats a tool as a mutation unless [mcp.%s] lists it in reads: "+
					"if it only reads, add reads = [%q] there (or trust_hints = true, when the server marks it readOnlyHint)",
					op, c.where(sc), r.reason, server, tool)
			} else {
				c.add(start, "%s is a read and is called in %s: %s", op, c.where(sc), r.reason)
			}
		}
	}
	c.method(call, spec, scope{}) // literal argument types; the phase is judged above
	c.required(call, spec, op)
	return true
}

// required reports the required arguments a literal argument object lacks;
// an object with a spread or a computed key may hold them.
func (c *callChecker) required(call *ast.CallExpression, spec MethodSpec, op string) {
	var need []string
	for _, a := range spec.Args {
		if a.Required {
			need = append(need, a.Name)
		}
	}
	if len(need) == 0 {
		return
	}
	have := map[string]bool{}
	if len(call.ArgumentList) > 0 {
		obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
		if !ok {
			return // an argument built elsewhere: the run's to check
		}
		for _, p := range obj.Value {
			kp, ok := p.(*ast.PropertyKeyed)
			if !ok || kp.Computed {
				return
			}
			have[propName(kp.Key)] = true
		}
	}
	var missing []string
	for _, n := range need {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		c.add(int(call.Idx0()), "%s: the tool's input schema requires %s", op, strings.Join(missing, ", "))
	}
}

// mcpCallee reads ctx.mcp.NAME.TOOL and ctx.mcp.NAME["TOOL"] (NAME may be
// bracketed alike); bracketed says whether a bracket is among them.
func mcpCallee(e ast.Expression, ctx string) (server, tool string, bracketed, ok bool) {
	_, server, tool, bracketed, ok = mcpBracketed(e, ctx)
	return server, tool, bracketed, ok
}

// mcpBracketed is mcpCallee with the identifier the call starts from.
func mcpBracketed(e ast.Expression, ctx string) (root *ast.Identifier, server, tool string, bracketed, ok bool) {
	left, tool, ok := memberOf(e)
	if !ok {
		return nil, "", "", false, false
	}
	mcp, server, ok := memberOf(left)
	if !ok {
		return nil, "", "", false, false
	}
	base, name, ok := memberOf(mcp)
	if !ok || name != "mcp" {
		return nil, "", "", false, false
	}
	id, ok := base.(*ast.Identifier)
	if !ok || id.Name.String() != ctx {
		return nil, "", "", false, false
	}
	_, b1 := e.(*ast.BracketExpression)
	_, b2 := left.(*ast.BracketExpression)
	_, b3 := mcp.(*ast.BracketExpression)
	return id, server, tool, b1 || b2 || b3, true
}

// memberOf is x.name or x["name"]: a member named literally.
func memberOf(e ast.Expression) (ast.Expression, string, bool) {
	switch m := e.(type) {
	case *ast.DotExpression:
		return m.Left, m.Identifier.Name.String(), true
	case *ast.BracketExpression:
		if s, ok := m.Member.(*ast.StringLiteral); ok {
			return m.Left, s.Value.String(), true
		}
	}
	return nil, "", false
}

// member is how a script names a member: .name, or ["get-env"].
func member(name string) string {
	if isIdent(name) {
		return "." + name
	}
	return "[" + strconv.Quote(name) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
