package sandbox

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
)

// calls checks every ctx call as written, with what keep.d.ts declares
// (the same registry: MethodSpec.Args, LoadOptions.Sources, and the phase
// rules of facade.go): a call in a phase that may not make it, a topic the
// workflow or its handler does not declare, an input source the host does
// not know, and a literal argument its declared type does not admit
// (method: "POTS"). Only what is written literally is judged; a value
// computed at run time is the run's to check.
func (v *validator) calls(tree *ast.Program, code string, wf Workflow, handlers map[string]handlerDecl, opts LoadOptions) {
	if tree == nil || tree.File == nil {
		return
	}
	c := &callChecker{v: v, tree: tree, code: code, handlers: handlers, topics: map[string]bool{}, sources: opts.Sources,
		specs: map[string]map[string]MethodSpec{}}
	for _, t := range wf.Topics {
		c.topics[t] = true
	}
	for _, m := range opts.Methods {
		if c.specs[m.Connector] == nil {
			c.specs[m.Connector] = map[string]MethodSpec{}
		}
		c.specs[m.Connector][m.Method] = m
	}
	c.walk(reflect.ValueOf(tree), scope{ctx: "ctx"})
}

type callChecker struct {
	v        *validator
	tree     *ast.Program
	code     string // the transformed source tree was parsed from
	handlers map[string]handlerDecl
	topics   map[string]bool
	sources  map[string][]string
	specs    map[string]map[string]MethodSpec
	keys     []string // the property names around the node being walked
}

// scope is what is known where a call is written: the phase function it is
// in (if any), its handler and the name its ctx parameter has.
type scope struct {
	phase   Phase
	handler string
	ctx     string
}

var phaseOfKey = map[string]Phase{"handler": PhaseProducer, "prepare": PhasePrepare, "mutate": PhaseMutate, "next": PhaseNext}

var (
	astPkg    = reflect.TypeOf(ast.Identifier{}).PkgPath()
	propKeyed = reflect.TypeOf(&ast.PropertyKeyed{})
	callExpr  = reflect.TypeOf(&ast.CallExpression{})
)

// walk visits every node of the tree by reflection: goja's ast has no
// walker of its own.
func (c *callChecker) walk(val reflect.Value, sc scope) {
	switch val.Kind() {
	case reflect.Interface:
		if !val.IsNil() {
			c.walk(val.Elem(), sc)
		}
		return
	case reflect.Slice:
		for i := 0; i < val.Len(); i++ {
			c.walk(val.Index(i), sc)
		}
		return
	case reflect.Pointer:
		if val.IsNil() || val.Elem().Kind() != reflect.Struct || val.Elem().Type().PkgPath() != astPkg {
			return
		}
	default:
		return
	}
	switch val.Type() {
	case propKeyed:
		p := val.Interface().(*ast.PropertyKeyed)
		key := propName(p.Key)
		c.keys = append(c.keys, key)
		defer func() { c.keys = c.keys[:len(c.keys)-1] }()
		if phase, ok := phaseOfKey[key]; ok {
			if params := functionParams(p.Value); params != nil {
				sc = c.enter(phase, params)
			}
		}
	case callExpr:
		c.call(val.Interface().(*ast.CallExpression), sc)
	}
	st := val.Elem()
	for i := 0; i < st.NumField(); i++ {
		f := st.Type().Field(i)
		if !f.IsExported() || f.Name == "DeclarationList" {
			continue // declarations are walked where they are written
		}
		c.walk(st.Field(i), sc)
	}
}

// enter is the scope of a phase function: its handler is the property
// around it that names a declared handler of the right kind.
func (c *callChecker) enter(phase Phase, params *ast.ParameterList) scope {
	sc := scope{phase: phase}
	if len(params.List) > 0 {
		if id, ok := params.List[0].Target.(*ast.Identifier); ok {
			sc.ctx = id.Name.String()
		}
	}
	if n := len(c.keys); n >= 2 {
		if h, ok := c.handlers[c.keys[n-2]]; ok && h.consumer == (phase != PhaseProducer) {
			sc.handler = c.keys[n-2]
		}
	}
	if sc.handler == "" {
		sc.phase = "" // not a handler's phase after all: a helper named alike
	}
	return sc
}

func functionParams(e ast.Expression) *ast.ParameterList {
	switch f := e.(type) {
	case *ast.FunctionLiteral:
		return f.ParameterList
	case *ast.ArrowFunctionLiteral:
		return f.ParameterList
	}
	return nil
}

func propName(k ast.Expression) string {
	switch k := k.(type) {
	case *ast.Identifier:
		return k.Name.String()
	case *ast.StringLiteral:
		return k.Value.String()
	}
	return ""
}

// at is the offset in the file as written of a node of the transformed
// code, through its source map (as parse errors are placed).
func (c *callChecker) at(idx int) int {
	off := idx - c.tree.File.Base()
	if off < 0 || off > len(c.code) {
		return -1
	}
	line := 1 + strings.Count(c.code[:off], "\n")
	col := off - strings.LastIndex(c.code[:off], "\n")
	l, cl, ok := sourcePosition(c.code, line, col)
	if !ok {
		return -1
	}
	return c.v.loc.offset(l, cl)
}

func (c *callChecker) add(idx int, format string, args ...any) {
	if off := c.at(idx); off >= 0 {
		c.v.add(off, format, args...)
	}
}

func (c *callChecker) call(call *ast.CallExpression, sc scope) {
	if c.mcpCall(call, sc) { // mcpcheck.go
		return
	}
	dot, ok := call.Callee.(*ast.DotExpression)
	if !ok {
		return
	}
	name := dot.Identifier.Name.String()
	switch left := dot.Left.(type) {
	case *ast.Identifier:
		if left.Name.String() == sc.ctx && builtinOps[name] {
			c.operation(call, name, sc)
		}
	case *ast.DotExpression:
		base, ok := left.Left.(*ast.Identifier)
		if !ok || base.Name.String() != sc.ctx {
			return
		}
		conn := left.Identifier.Name.String()
		if spec, ok := c.specs[conn][name]; ok {
			c.method(call, spec, sc)
		}
	}
}

func (c *callChecker) where(sc scope) string {
	if sc.phase == PhaseProducer {
		return fmt.Sprintf("producer %q", sc.handler)
	}
	return fmt.Sprintf("%s of consumer %q", sc.phase, sc.handler)
}

func (c *callChecker) method(call *ast.CallExpression, spec MethodSpec, sc scope) {
	op := "ctx." + spec.Connector + "." + spec.Method
	start := int(call.Idx0())
	if sc.phase != "" {
		if r := kindRule(spec.Kind, sc.phase); !slices.Contains(r.phases, sc.phase) {
			what := "a read"
			if spec.Kind == KindMutate {
				what = "a mutation"
			}
			c.add(start, "%s is %s and is called in %s: %s", op, what, c.where(sc), r.reason)
		}
	}
	if len(call.ArgumentList) == 0 {
		return
	}
	obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
	if !ok {
		return
	}
	types := map[string]string{}
	for _, a := range spec.Args {
		types[a.Name] = a.Type
	}
	for _, p := range obj.Value {
		kp, ok := p.(*ast.PropertyKeyed)
		if !ok || kp.Computed {
			continue
		}
		key := propName(kp.Key)
		typ, declared := types[key]
		if !declared {
			continue
		}
		if text, fits, judged := literalFits(typ, kp.Value); judged && !fits {
			c.add(int(kp.Value.Idx0()), "%s: %s %s is not a %s", op, key, text, typ)
		}
	}
}

func (c *callChecker) operation(call *ast.CallExpression, op string, sc scope) {
	start := int(call.Idx0())
	r := map[string]rule{"registerInput": ruleRegisterInput, "publish": rulePublish, "peek": ruleTopicRead, "getByIds": ruleTopicRead}[op]
	if sc.phase != "" && !slices.Contains(r.phases, sc.phase) {
		c.add(start, "ctx.%s is called in %s: %s", op, c.where(sc), r.reason)
	}
	if len(call.ArgumentList) == 0 {
		return
	}
	first := call.ArgumentList[0]
	switch op {
	case "publish", "peek", "getByIds":
		var lits []*ast.StringLiteral
		switch a := first.(type) {
		case *ast.StringLiteral:
			lits = append(lits, a)
		case *ast.ArrayLiteral:
			if op == "publish" {
				for _, e := range a.Value {
					if s, ok := e.(*ast.StringLiteral); ok {
						lits = append(lits, s)
					}
				}
			}
		}
		for _, l := range lits {
			c.topic(op, l, sc)
		}
	case "registerInput":
		obj, ok := first.(*ast.ObjectLiteral)
		if !ok || c.sources == nil {
			return
		}
		var source, typ *ast.StringLiteral
		for _, p := range obj.Value {
			if kp, ok := p.(*ast.PropertyKeyed); ok && !kp.Computed {
				s, _ := kp.Value.(*ast.StringLiteral)
				switch propName(kp.Key) {
				case "source":
					source = s
				case "type":
					typ = s
				}
			}
		}
		if source == nil {
			return
		}
		types, known := c.sources[source.Value.String()]
		switch {
		case !known:
			c.add(int(source.Idx), "ctx.registerInput: unknown input source %q (known: %s)", source.Value.String(), names(c.sources))
		case typ != nil && !slices.Contains(types, typ.Value.String()):
			c.add(int(typ.Idx), "ctx.registerInput: input source %q has no type %q (its types: %s)", source.Value.String(), typ.Value.String(), strings.Join(types, ", "))
		}
	}
}

// topic checks a topic named literally: declared by the workflow, and
// listed by the handler for what the call does with it.
func (c *callChecker) topic(op string, l *ast.StringLiteral, sc scope) {
	t := l.Value.String()
	if !c.topics[t] {
		c.add(int(l.Idx), "ctx.%s names topic %q, which is not declared in topics", op, t)
		return
	}
	h, ok := c.handlers[sc.handler]
	if sc.handler == "" || !ok {
		return
	}
	list, field := h.subscribe, "subscribe"
	if op == "publish" {
		list, field = h.publishes, "publishes"
	}
	if !slices.Contains(list, t) {
		c.add(int(l.Idx), "ctx.%s names topic %q, which %s does not list in %s", op, t, c.where(sc), field)
	}
}

// literalFits judges a literal value against a TypeScript type made of
// string literals and primitive names ("POST" | "PUT", string, number,
// boolean). judged is false for anything else: an expression, or a type
// this does not read (an object type, a Record, an array).
func literalFits(typ string, e ast.Expression) (text string, fits, judged bool) {
	var kind, lit string
	switch x := e.(type) {
	case *ast.StringLiteral:
		kind, lit, text = "string", x.Value.String(), strconv.Quote(x.Value.String())
	case *ast.NumberLiteral:
		kind, text = "number", x.Literal
	case *ast.BooleanLiteral:
		kind, text = "boolean", strconv.FormatBool(x.Value)
	default:
		return "", false, false
	}
	for _, alt := range strings.Split(typ, "|") {
		alt = strings.TrimSpace(alt)
		switch {
		case alt == "any" || alt == "unknown" || alt == kind:
			return text, true, true
		case alt == "null" || alt == "undefined" || alt == "string" || alt == "number" || alt == "boolean":
		case len(alt) >= 2 && alt[0] == '"' && alt[len(alt)-1] == '"':
			if kind == "string" && alt[1:len(alt)-1] == lit {
				return text, true, true
			}
		case (alt == "true" || alt == "false") && kind == "boolean":
			if alt == text {
				return text, true, true
			}
		default:
			return text, false, false // a type not read here
		}
	}
	return text, false, true
}
