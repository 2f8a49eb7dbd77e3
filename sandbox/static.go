package sandbox

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/go-sourcemap/sourcemap"
)

// calls checks every ctx call as written, with what keep.d.ts declares
// (the same registry: MethodSpec.Args, LoadOptions.Sources, and the phase
// rules of facade.go): a call in a phase that may not make it, a topic the
// workflow or its handler does not declare, an input source the host does
// not know, and a literal argument its declared type does not admit
// (method: "POTS"). Only what is written literally is judged; a value
// computed at run time is the run's to check.
//
// The same walk names everything the file may do, its manifest, and
// refuses every use of ctx it cannot name: a computed key (ctx[F]), ctx
// handed to code it cannot read (a method, an array, a destructuring), or
// reached unnamed (arguments, eval). What it can follow it follows: an
// alias (const c = ctx) and a function of the file that is given ctx.
func (v *validator) calls(tree *ast.Program, code string, wf Workflow, handlers map[string]handlerDecl, opts LoadOptions) *Manifest {
	if tree == nil || tree.File == nil {
		return nil
	}
	c := &callChecker{v: v, tree: tree, code: code, handlers: handlers, topics: map[string]bool{}, sources: opts.Sources,
		specs: map[string]map[string]MethodSpec{}, names: map[string]bool{"ctx": true}, funcs: map[string][]fnDef{},
		tied: map[string]bool{}, loose: map[string]bool{}}
	judged := len(v.diags) == 0 // a declaration with faults of its own is not judged further
	for _, t := range wf.Topics {
		c.topics[t] = true
	}
	for _, m := range opts.Methods {
		if c.specs[m.Connector] == nil {
			c.specs[m.Connector] = map[string]MethodSpec{}
		}
		c.specs[m.Connector][m.Method] = m
	}
	// The names ctx goes by grow as aliases and followed calls are found:
	// walk until they stop growing, then once more to judge and record.
	c.collect = true
	for range 20 {
		before := len(c.names) + c.nfuncs
		c.followed = map[followKey]bool{}
		c.walk(reflect.ValueOf(tree), scope{ctx: "ctx"})
		if len(c.names)+c.nfuncs == before {
			break
		}
	}
	c.collect = false
	c.followed = map[followKey]bool{}
	c.walk(reflect.ValueOf(tree), scope{ctx: "ctx"})
	if judged {
		c.untied()
	}
	// The hosts are those of every URL the file as written names, in a
	// string or a comment alike: what the person reads is what it may reach.
	return c.man.build(HostsIn(v.loc.src), wf.Topics)
}

type callChecker struct {
	v         *validator
	tree      *ast.Program
	code      string // the transformed source tree was parsed from
	srcMap    *sourcemap.Consumer
	mapRead   bool  // srcMap and codeLines are read from code, once
	codeLines []int // where code's lines start
	handlers  map[string]handlerDecl
	topics    map[string]bool
	sources   map[string][]string
	specs     map[string]map[string]MethodSpec
	keys      []string // the property names around the node being walked

	collect  bool            // the first walks: only names and functions are gathered
	names    map[string]bool // what ctx goes by: its parameters, aliases, parameters it is passed to
	funcs    map[string][]fnDef
	nfuncs   int
	followed map[followKey]bool
	said     map[string]bool // diagnostics given (a followed function is walked again)
	man      manifestBuilder
	// tied: the phases ("handler\x00field") whose function the walk found
	// and walked as that phase; loose: phase keys met where no handler
	// could be tied to them, whose functions are walked for any phase
	tied, loose map[string]bool
}

// fnDef is a function of the file, by the name it is declared under.
type fnDef struct {
	params *ast.ParameterList
	body   ast.Node
}

// followKey is a function followed once per phase and name of ctx: the
// work is bounded by the file's functions, not its handlers.
type followKey struct {
	params *ast.ParameterList
	phase  Phase
	ctx    string
	loose  bool
}

// scope is what is known where a call is written: the phase function it is
// in (if any), its handler and the name its ctx parameter has. followed is
// a function of the file walked from a call that hands it ctx: its calls
// are named for the manifest, the phase rules are the run's to check.
type scope struct {
	phase    Phase
	handler  string
	ctx      string
	followed bool
	// args: arguments here is that of a function given ctx
	args bool
	// loose: inside a phase-like function keep could not tie to a
	// handler: its calls may run in any phase
	loose bool
}

var phaseOfKey = map[string]Phase{"handler": PhaseProducer, "prepare": PhasePrepare, "mutate": PhaseMutate, "next": PhaseNext}

var astPkg = reflect.TypeOf(ast.Identifier{}).PkgPath()

// walk visits every node of the tree by reflection: goja's ast has no
// walker of its own. Names that are not references (a property key, a
// declared name, a label) are not visited, so that every identifier the
// walk meets is a use.
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
	case reflect.Struct:
		if val.Type().PkgPath() == astPkg {
			c.fields(val, sc) // a node held by value (ForLoopInitializerLexicalDecl)
		}
		return
	case reflect.Pointer:
		if val.IsNil() || val.Elem().Kind() != reflect.Struct || val.Elem().Type().PkgPath() != astPkg {
			return
		}
	default:
		return
	}
	if !c.node(val.Interface(), sc) {
		c.fields(val.Elem(), sc)
	}
}

// node walks what n holds where its kind decides how, and reports false
// for a node whose fields are walked as they come.
func (c *callChecker) node(n any, sc scope) bool {
	switch n := n.(type) {
	case *ast.PropertyKeyed:
		c.propertyKeyed(n, sc)
	case *ast.CallExpression:
		return c.call(n, sc)
	case *ast.Identifier:
		c.use(n, sc)
	case *ast.DotExpression:
		root := dotRoot(n)
		if root == nil || !c.isCtx(root, sc) {
			return false
		}
		_, chain := dotChain(n)
		if !c.nameable(chain) {
			return false
		}
		c.ctxCall(nil, int(n.Idx0()), root, chain, sc) // a method taken as a value: still that method
	case *ast.PropertyShort:
		if c.names[n.Name.Name.String()] {
			c.unnamed(int(n.Name.Idx), "ctx is put into an object as %s: keep cannot follow it there; call ctx.CONNECTOR.METHOD(...) where it is needed", n.Name.Name)
		}
		if _, ok := phaseOfKey[n.Name.Name.String()]; ok && n.Initializer == nil {
			// { prepare } is prepare: prepare, a function of the file by name
			c.propertyKeyed(&ast.PropertyKeyed{Key: &n.Name, Kind: ast.PropertyKindValue, Value: &n.Name}, sc)
			return true
		}
		c.walk(reflect.ValueOf(n.Initializer), sc)
	case *ast.Binding:
		c.binding(n, sc)
	case *ast.FunctionLiteral:
		inner := sc
		inner.args = false // arguments here is this function's own
		c.walk(reflect.ValueOf(n.ParameterList), inner)
		c.walk(reflect.ValueOf(n.Body), inner)
	case *ast.FunctionDeclaration:
		if n.Function != nil && n.Function.Name != nil {
			c.declare(n.Function.Name.Name.String(), n.Function)
		}
		return false
	default:
		return c.declaration(n, sc)
	}
	return true
}

// propertyKeyed walks a property of an object literal: one keyed by a
// phase's name (handler, prepare, mutate, next) opens that phase.
func (c *callChecker) propertyKeyed(n *ast.PropertyKeyed, sc scope) {
	key := propName(n.Key)
	c.keys = append(c.keys, key)
	defer func() { c.keys = c.keys[:len(c.keys)-1] }()
	if phase, ok := phaseOfKey[key]; ok && !n.Computed && (n.Kind == ast.PropertyKindGet || n.Kind == ast.PropertyKindSet) {
		// the function that runs is one the accessor computes: refused
		// here, once, not again as a phase the walk did not find
		c.entered(key, c.enter(phase, &ast.ParameterList{}).handler)
		c.unnamed(int(n.Key.Idx0()), "%s is written as a %s: keep cannot see which function it gives, nor what that calls; write the function itself (%s: async (ctx, ...) => {...})", key, n.Kind+"ter", key)
	} else if phase, ok := phaseOfKey[key]; ok && !n.Computed {
		if params := functionParams(n.Value); params != nil {
			sc = c.enter(phase, params)
			c.entered(key, sc.handler)
			if f, ok := n.Value.(*ast.FunctionLiteral); ok {
				// its arguments hold ctx: walked here, not as a
				// function that has arguments of its own
				sc.args = true
				c.walk(reflect.ValueOf(f.ParameterList), sc)
				c.walk(reflect.ValueOf(f.Body), sc)
				return
			}
			sc.args = true
		} else if inner := c.enter(phase, &ast.ParameterList{}); inner.handler != "" {
			if c.phaseByName(n.Value, inner) {
				c.entered(key, inner.handler)
			}
		} else if id, ok := n.Value.(*ast.Identifier); ok && len(c.funcs[id.Name.String()]) > 0 {
			c.entered(key, "")
		}
	}
	if n.Computed {
		c.walk(reflect.ValueOf(n.Key), sc)
	}
	c.walk(reflect.ValueOf(n.Value), sc)
}

// binding walks a declared name and its initializer: a name bound to ctx
// is an alias of it.
func (c *callChecker) binding(n *ast.Binding, sc scope) {
	target, isName := n.Target.(*ast.Identifier)
	if isName {
		if src, ok := n.Initializer.(*ast.Identifier); ok && c.names[src.Name.String()] {
			c.alias(target.Name.String())
			return
		}
		c.declare(target.Name.String(), n.Initializer)
	} else {
		c.walk(reflect.ValueOf(n.Target), sc)
	}
	c.walk(reflect.ValueOf(n.Initializer), sc)
}

// declaration walks the parts of classes and statements that hold uses,
// past the names they declare (which are not uses); false for any other
// node.
func (c *callChecker) declaration(n any, sc scope) bool {
	w := func(n any) { c.walk(reflect.ValueOf(n), sc) }
	switch n := n.(type) {
	case *ast.ClassLiteral:
		w(n.SuperClass)
		w(n.Body)
	case *ast.MethodDefinition:
		if n.Computed {
			w(n.Key)
		}
		w(n.Body)
	case *ast.FieldDefinition:
		if n.Computed {
			w(n.Key)
		}
		w(n.Initializer)
	case *ast.LabelledStatement:
		w(n.Statement)
	case *ast.BranchStatement, *ast.MetaProperty:
	case *ast.CatchStatement:
		if _, ok := n.Parameter.(*ast.Identifier); !ok {
			w(n.Parameter)
		}
		w(n.Body)
	case *ast.ForDeclaration:
		if _, ok := n.Target.(*ast.Identifier); !ok {
			w(n.Target)
		}
	default:
		return false
	}
	return true
}

func (c *callChecker) fields(st reflect.Value, sc scope) {
	for i := 0; i < st.NumField(); i++ {
		f := st.Type().Field(i)
		if !f.IsExported() || f.Name == "DeclarationList" {
			continue // declarations are walked where they are written
		}
		c.walk(st.Field(i), sc)
	}
}

// declare records a function of the file under its name, for a call that
// hands it ctx.
func (c *callChecker) declare(name string, init ast.Node) {
	if !c.collect {
		return
	}
	var d fnDef
	switch f := init.(type) {
	case *ast.FunctionLiteral:
		d = fnDef{params: f.ParameterList, body: f.Body}
	case *ast.ArrowFunctionLiteral:
		d = fnDef{params: f.ParameterList, body: f.Body}
	default:
		return
	}
	for _, have := range c.funcs[name] {
		if have.params == d.params {
			return
		}
	}
	c.funcs[name] = append(c.funcs[name], d)
	c.nfuncs++
}

func (c *callChecker) alias(name string) {
	if c.collect {
		c.names[name] = true
	}
}

// use is an identifier met where the walk does not follow it: ctx there is
// out of keep's sight.
func (c *callChecker) use(id *ast.Identifier, sc scope) {
	switch name := id.Name.String(); {
	case c.names[name]:
		c.unnamed(int(id.Idx), "%s (ctx) is used in a way keep cannot follow: a computed name, an alias handed on, or ctx given to code keep cannot read; "+
			"call each method by its name, as ctx.CONNECTOR.METHOD(...)", name)
	case name == "arguments" && sc.args:
		c.unnamed(int(id.Idx), "arguments can hand on ctx under no name keep can follow; name the parameter instead")
	case name == "eval":
		c.unnamed(int(id.Idx), "eval runs code keep cannot read, which can reach ctx")
	}
}

// refuse is a diagnostic of the last walk, given once.
func (c *callChecker) refuse(idx int, format string, args ...any) {
	if !c.collect {
		c.add(idx, format, args...)
	}
}

// unnamed refuses a use of ctx keep cannot name. Only tests turn it off
// (validator.unnamedOK), to run what a version that somehow lacks a
// manifest entry would do.
func (c *callChecker) unnamed(idx int, format string, args ...any) {
	if !c.v.unnamedOK {
		c.refuse(idx, format, args...)
	}
}

// phaseByName is a phase given as a name rather than written in place
// (handler: poll): a function of the file is followed as the phase. It
// reports whether the walk found the phase's function: a function of the
// file, or one written inside the expression given (handler: wrap(async
// (ctx) => ...)); not one an expression computes (handler: make("in")),
// whose parameters the walk never sees.
func (c *callChecker) phaseByName(val ast.Expression, sc scope) bool {
	id, ok := val.(*ast.Identifier)
	if !ok || len(c.funcs[id.Name.String()]) == 0 {
		return c.phaseExpr(val)
	}
	for _, f := range c.funcs[id.Name.String()] {
		c.follow(f, 0, sc)
	}
	return true
}

// entered records that the walk found a phase function under key, tied
// to handler (or to none: a helper or a declaration made apart).
func (c *callChecker) entered(key, handler string) {
	if handler == "" {
		c.loose[key] = true
		return
	}
	c.tied[handler+"\x00"+key] = true
}

// untied refuses each phase of a declared handler whose function the walk
// never found: a function computed by a call, read from an object or an
// array, or put under a computed key is run with ctx, and what it does
// with ctx is out of the analysis's sight, so its calls are in no
// manifest. (It validated, and its run then failed on a connector its
// ctx did not have.) A phase key met where no handler could be tied
// covers that phase of every handler, for any phase, as its calls are.
func (c *callChecker) untied() {
	names := slices.Sorted(maps.Keys(c.handlers))
	for _, name := range names {
		h := c.handlers[name]
		kind, fields := "producer", []string{"handler"}
		if h.consumer {
			kind, fields = "consumer", []string{"prepare", "mutate", "next"}
		}
		for _, f := range fields {
			if c.tied[name+"\x00"+f] || c.loose[f] || c.v.unnamedOK {
				continue
			}
			off := -1
			if at, ok := h.at[f]; ok {
				off = c.v.loc.offset(at[0], at[1])
			}
			if off < 0 {
				off = max(c.v.loc.key(0, name), 0)
			}
			c.v.add(off, "keep cannot see which function is the %s of %s %q (one a call computes, read from an object or an array, or under a computed key), so not what it calls; "+
				"write it in place (%s: async (ctx, ...) => {...}) or name a function of the file (%s: poll)", f, kind, name, f, f)
		}
	}
}

// follow walks f as called with ctx as its i-th argument, in sc's phase.
// A parameter past f's names is reached only by arguments (refused in f)
// or a rest parameter (refused here).
func (c *callChecker) follow(f fnDef, i int, sc scope) {
	name := ""
	switch {
	case i < len(f.params.List):
		id, ok := f.params.List[i].Target.(*ast.Identifier)
		if !ok {
			c.unnamed(int(f.params.List[i].Target.Idx0()), "this parameter takes ctx apart, which keep cannot follow; name it (ctx) and call ctx.CONNECTOR.METHOD(...)")
			return
		}
		name = id.Name.String()
		c.alias(name)
	case f.params.Rest != nil:
		c.unnamed(int(f.params.Rest.Idx0()), "a rest parameter gathers ctx, which keep cannot follow; name it (ctx) and call ctx.CONNECTOR.METHOD(...)")
		return
	}
	key := followKey{params: f.params, phase: sc.phase, ctx: name, loose: sc.loose}
	if c.followed[key] {
		return
	}
	c.followed[key] = true
	c.walk(reflect.ValueOf(f.body), scope{phase: sc.phase, handler: sc.handler, ctx: name, followed: true, args: true, loose: sc.loose})
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
		sc.loose = true
		return sc
	}
	if sc.ctx != "" {
		c.alias(sc.ctx)
	} else if len(params.List) == 0 && params.Rest != nil {
		c.unnamed(int(params.Rest.Idx0()), "a rest parameter gathers the ctx of %s, which keep cannot follow; name it (ctx) and call ctx.CONNECTOR.METHOD(...)", c.where(sc))
	} else if len(params.List) > 0 && !c.takesNothing(params.List[0].Target) {
		c.unnamed(int(params.List[0].Target.Idx0()), "the ctx parameter of %s takes ctx apart, which keep cannot follow; name it (ctx) and call ctx.CONNECTOR.METHOD(...)", c.where(sc))
	}
	return sc
}

// takesNothing says a destructuring of ctx takes nothing ctx has ({ a }):
// each name it takes is plain, and none an operation or a connector.
func (c *callChecker) takesNothing(t ast.BindingTarget) bool {
	p, ok := t.(*ast.ObjectPattern)
	if !ok || p.Rest != nil {
		return false
	}
	for _, prop := range p.Properties {
		var name string
		switch x := prop.(type) {
		case *ast.PropertyShort:
			name = x.Name.Name.String()
		case *ast.PropertyKeyed:
			if x.Computed {
				return false
			}
			name = propName(x.Key)
		default:
			return false
		}
		if name == "" || name == "mcp" || builtinOps[name] || c.specs[name] != nil {
			return false
		}
	}
	return true
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
	if !c.mapRead {
		c.srcMap, c.codeLines, c.mapRead = sourceMap(c.code), lineStarts(c.code), true
	}
	line, start := lineOf(c.codeLines, off)
	col := off - start + 1
	l, cl, ok := mapPosition(c.srcMap, line, col)
	if !ok {
		return -1
	}
	return c.v.loc.offset(l, cl)
}

func (c *callChecker) add(idx int, format string, args ...any) {
	if off := c.at(idx); off >= 0 {
		key := strconv.Itoa(off) + fmt.Sprintf(format, args...)
		if c.said[key] {
			return
		}
		if c.said == nil {
			c.said = map[string]bool{}
		}
		c.said[key] = true
		c.v.add(off, format, args...)
	}
}

// dotRoot is the identifier e = root.a.b… starts from: nil when e is
// anything else. It allocates nothing: most chains walked are not ctx's.
func dotRoot(e ast.Expression) *ast.Identifier {
	for {
		switch x := e.(type) {
		case *ast.DotExpression:
			e = x.Left
		case *ast.Identifier:
			return x
		default:
			return nil
		}
	}
}

// dotChain is e as root.a.b…: nil when e is anything else.
func dotChain(e ast.Expression) (*ast.Identifier, []string) {
	var chain []string
	for {
		switch x := e.(type) {
		case *ast.DotExpression:
			chain = append([]string{x.Identifier.Name.String()}, chain...)
			e = x.Left
		case *ast.Identifier:
			return x, chain
		default:
			return nil, nil
		}
	}
}

// call judges a call. It reports whether it walked the call itself: a call
// through ctx (ctx.files.read(...)), or one that hands ctx to a function of
// the file, which is followed.
func (c *callChecker) call(call *ast.CallExpression, sc scope) bool {
	if root, server, tool, bracketed, ok := mcpBracketed(call.Callee, sc.ctx); ok && bracketed {
		// ctx.mcp.NAME["get-env"](…): a tool whose name is no identifier,
		// named by a string key (the only bracket keep reads as a name)
		c.ctxCall(call, int(call.Idx0()), root, []string{"mcp", server, tool}, sc)
		for _, a := range call.ArgumentList {
			c.walk(reflect.ValueOf(a), sc)
		}
		return true
	}
	root := dotRoot(call.Callee)
	_, isDot := call.Callee.(*ast.DotExpression)
	switch {
	case root != nil && isDot && c.isCtx(root, sc):
		_, chain := dotChain(call.Callee)
		c.ctxCall(call, int(call.Idx0()), root, chain, sc)
	case root != nil && !isDot && len(c.funcs[root.Name.String()]) > 0 && c.passesCtx(call, sc):
		c.handOn(call, c.funcs[root.Name.String()], sc)
		return true
	case functionParams(call.Callee) != nil && c.passesCtx(call, sc):
		// a function written in place and called at once: (async (c) => …)(ctx)
		var f fnDef
		switch fn := call.Callee.(type) {
		case *ast.FunctionLiteral:
			f = fnDef{params: fn.ParameterList, body: fn.Body}
		case *ast.ArrowFunctionLiteral:
			f = fnDef{params: fn.ParameterList, body: fn.Body}
		}
		c.handOn(call, []fnDef{f}, sc)
		return true
	default:
		return false
	}
	for _, a := range call.ArgumentList {
		c.walk(reflect.ValueOf(a), sc)
	}
	return true
}

// isCtx says id names ctx where it is: one of ctx's names, or the first
// parameter of a phase-like function keep could not tie to a handler
// (consumers: { c }, a Keep.consumer declared apart), whose calls are
// named for the manifest in any phase, so that none is refused at run time.
func (c *callChecker) isCtx(id *ast.Identifier, sc scope) bool {
	name := id.Name.String()
	return c.names[name] || name == sc.ctx
}

// nameable says chain names an operation or a method (and maybe more
// after it), not a connector alone.
func (c *callChecker) nameable(chain []string) bool {
	switch {
	case builtinOps[chain[0]]:
		return true
	case chain[0] == "mcp":
		return len(chain) >= 3
	}
	return len(chain) >= 2
}

// handOn follows fns as called by call, which hands them ctx.
func (c *callChecker) handOn(call *ast.CallExpression, fns []fnDef, sc scope) {
	for i, a := range call.ArgumentList {
		if id, ok := a.(*ast.Identifier); ok && c.isCtx(id, sc) {
			for _, f := range fns {
				c.follow(f, i, sc)
			}
			continue
		}
		c.walk(reflect.ValueOf(a), sc)
	}
}

func (c *callChecker) passesCtx(call *ast.CallExpression, sc scope) bool {
	for _, a := range call.ArgumentList {
		if id, ok := a.(*ast.Identifier); ok && c.isCtx(id, sc) {
			return true
		}
	}
	return false
}

// ctxCall is root.chain, called (call) or not, with root a name of ctx: an
// operation (ctx.publish), a connector method (ctx.files.read) or an MCP
// tool (ctx.mcp.NAME.TOOL), and what follows it (ctx.files.read.call).
// Anything shorter (ctx.files) could be indexed by a computed name: it is
// not something keep can name.
func (c *callChecker) ctxCall(call *ast.CallExpression, at int, root *ast.Identifier, chain []string, sc scope) {
	direct := call != nil && root.Name.String() == sc.ctx && !sc.followed
	var conn, method string
	var rest []string
	switch {
	case builtinOps[chain[0]]:
		if direct && len(chain) == 1 {
			c.operation(call, chain[0], sc)
		}
		return
	case chain[0] == "mcp" && len(chain) >= 3:
		conn, method, rest = "mcp."+chain[1], chain[2], chain[3:]
	case chain[0] != "mcp" && len(chain) >= 2:
		conn, method, rest = chain[0], chain[1], chain[2:]
	default:
		if c.names[root.Name.String()] {
			c.unnamed(at, "ctx.%s is not an operation or a connector method keep can name; call ctx.CONNECTOR.METHOD(...)", strings.Join(chain, "."))
		}
		return
	}
	spec, ok := c.specs[conn][method]
	switch {
	case !ok && !c.names[root.Name.String()]:
		// the parameter of a phase-like function keep could not tie to a
		// handler (isCtx) may be no ctx at all: only what it names is kept
	case strings.HasPrefix(conn, "mcp.") && direct && len(rest) == 0 && !c.collect && c.mcpCall(call, sc):
		// mcpcheck.go judged the tool as written (the server has it, its
		// phase, its schema), in the words that say how to make it a read
		if ok {
			c.man.add(conn, method, spec.Kind, sc.phase, sc.loose)
		}
	case c.specs[conn] == nil:
		c.refuse(at, "ctx.%s.%s: there is no connector %q (known: %s)", conn, method, conn, names(c.specs))
	case !ok:
		c.refuse(at, "ctx.%s.%s: connector %q has no method %q (known: %s)", conn, method, conn, method, names(c.specs[conn]))
	case c.collect:
	default:
		c.man.add(conn, method, spec.Kind, sc.phase, sc.loose)
		if direct && len(rest) == 0 {
			c.method(call, spec, sc)
		}
	}
}

// phaseExpr is a phase written as an expression keep does not read as one
// function ((() => {}).bind(null)): the functions written inside it may be
// handed ctx, so their first parameters are names of ctx.
func (c *callChecker) phaseExpr(val ast.Expression) (found bool) {
	var find func(v reflect.Value)
	find = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			if params := functionParams(asExpr(v)); params != nil {
				found = true
				if len(params.List) > 0 {
					if id, ok := params.List[0].Target.(*ast.Identifier); ok {
						c.alias(id.Name.String())
					}
				}
			}
			find(v.Elem())
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				find(v.Index(i))
			}
		case reflect.Struct:
			if v.Type().PkgPath() == astPkg {
				for i := 0; i < v.NumField(); i++ {
					if v.Type().Field(i).IsExported() {
						find(v.Field(i))
					}
				}
			}
		}
	}
	find(reflect.ValueOf(val))
	return found
}

func asExpr(v reflect.Value) ast.Expression {
	if !v.CanInterface() {
		return nil
	}
	e, _ := v.Interface().(ast.Expression)
	return e
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
		if short, ok := p.(*ast.PropertyShort); ok {
			c.undeclared(spec, op, short.Name.Name.String(), int(short.Name.Idx0()), types)
			continue
		}
		kp, ok := p.(*ast.PropertyKeyed)
		if !ok || kp.Computed {
			continue
		}
		key := propName(kp.Key)
		typ, declared := types[key]
		if !declared {
			c.undeclared(spec, op, key, int(kp.Key.Idx0()), types)
			continue
		}
		if a, _ := argNamed(spec.Args, key); len(a.Fields) > 0 {
			c.nested(op, key, a, kp.Value)
			continue
		}
		if text, fits, judged := literalFits(typ, kp.Value); judged && !fits {
			c.add(int(kp.Value.Idx0()), "%s: %s %s is not a %s", op, key, text, typ)
		}
	}
}

// nested checks a literal value of an argument whose fields are declared
// (reconcile: { url }), in the words the host refuses the call with at run
// time (connectors.Undeclared): an undeclared field at the field, a
// required one missing at the object, a literal that is no object at the
// value. What is built elsewhere, spread or computed is the run's to check.
func (c *callChecker) nested(op, name string, a ArgSpec, v ast.Expression) {
	obj, ok := v.(*ast.ObjectLiteral)
	if !ok {
		if kind := literalKind(v); kind != "" {
			c.add(int(v.Idx0()), "%s %s must be an object %s, not %s", op, name, a.Type, kind)
		}
		return
	}
	have, whole := map[string]bool{}, true
	for _, p := range obj.Value {
		var key string
		var at int
		var val ast.Expression
		switch p := p.(type) {
		case *ast.PropertyShort:
			key, at = p.Name.Name.String(), int(p.Name.Idx0())
		case *ast.PropertyKeyed:
			if p.Computed {
				whole = false
				continue
			}
			key, at, val = propName(p.Key), int(p.Key.Idx0()), p.Value
		}
		if key == "" { // a spread, or a key not read here
			whole = false
			continue
		}
		f, declared := argNamed(a.Fields, key)
		if !declared {
			c.add(at, "%s takes no %s.%s (%s takes%s)", op, name, key, name, takesOf(a.Fields))
			continue
		}
		if _, null := val.(*ast.NullLiteral); !null {
			have[key] = true
		}
		switch {
		case val == nil:
		case len(f.Fields) > 0:
			c.nested(op, name+"."+key, f, val)
		default:
			if text, fits, judged := literalFits(f.Type, val); judged && !fits {
				c.add(int(val.Idx0()), "%s: %s.%s %s is not a %s", op, name, key, text, f.Type)
			}
		}
	}
	if !whole {
		return
	}
	var missing []string
	for _, f := range a.Fields {
		if f.Required && !have[f.Name] {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		c.add(int(obj.Idx0()), "%s %s needs %s", op, name, strings.Join(missing, ", "))
	}
}

// argNamed is the argument of args named name.
func argNamed(args []ArgSpec, name string) (ArgSpec, bool) {
	for _, a := range args {
		if a.Name == name {
			return a, true
		}
	}
	return ArgSpec{}, false
}

// takesOf is what follows "it takes" or "reconcile takes" in a refusal,
// as connectors.Undeclared writes it.
func takesOf(args []ArgSpec) string {
	if len(args) == 0 {
		return " nothing"
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
	}
	return ": " + strings.Join(names, ", ")
}

// literalKind names the kind of a literal that is no object, as
// connectors.Undeclared names a value's; "" for anything else.
func literalKind(e ast.Expression) string {
	switch e.(type) {
	case *ast.StringLiteral, *ast.TemplateLiteral:
		return "a string"
	case *ast.NumberLiteral:
		return "a number"
	case *ast.BooleanLiteral:
		return "a boolean"
	case *ast.ArrayLiteral:
		return "a list"
	}
	return ""
}

// undeclared reports a literal argument field the method does not
// declare, in the words the host refuses the call with at run time
// (connectors.Undeclared): the connector would drop it silently.
func (c *callChecker) undeclared(spec MethodSpec, op, key string, at int, types map[string]string) {
	if _, ok := types[key]; ok || spec.OpenArgs || key == "" {
		return
	}
	c.add(at, "%s takes no %s (it takes%s)", op, key, takesOf(spec.Args))
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
