package sandbox

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// A consumer's next that does nothing (async next() {}, the common case
// when a consumer publishes nothing) need not run: the host skips its
// phase, and with it a fresh runtime and a conversation with a worker per
// run. What next would have produced without running is known: no state
// returned, nothing published, nothing logged.
//
// Only a function whose own text says so counts: no statements, and
// parameters that are plain names (a default value or a destructuring
// pattern runs code when next is called). A script that lies about its
// text (a toString of its own) only skips its own next: nothing the host
// does depends on it but whether that phase runs.

// emptyFunction says whether val is a function whose body is empty.
func emptyFunction(vm *goja.Runtime, val goja.Value) bool {
	if !isFunction(val) {
		return false
	}
	var src string
	if ex := vm.Try(func() { src = val.String() }); ex != nil {
		return false
	}
	if len(src) > 4096 {
		return false // an empty function is short, whatever its parameters
	}
	// A method's text (async next() {}) is not an expression on its own:
	// inside an object literal it is.
	for _, wrap := range [][2]string{{"(", "\n)"}, {"({", "\n})"}} {
		prog, err := parser.ParseFile(nil, "", wrap[0]+src+wrap[1], 0)
		if err != nil || len(prog.Body) != 1 {
			continue
		}
		st, ok := prog.Body[0].(*ast.ExpressionStatement)
		if !ok {
			return false
		}
		expr := st.Expression
		if obj, ok := expr.(*ast.ObjectLiteral); ok {
			if len(obj.Value) != 1 {
				return false
			}
			p, ok := obj.Value[0].(*ast.PropertyKeyed)
			if !ok || p.Kind != ast.PropertyKindMethod {
				return false
			}
			expr = p.Value
		}
		switch f := expr.(type) {
		case *ast.FunctionLiteral:
			return !f.Generator && plainParams(f.ParameterList) && f.Body != nil && len(f.Body.List) == 0
		case *ast.ArrowFunctionLiteral:
			b, ok := f.Body.(*ast.BlockStatement)
			return ok && plainParams(f.ParameterList) && len(b.List) == 0
		}
		return false
	}
	return false
}

// plainParams: every parameter is a name, without a default.
func plainParams(pl *ast.ParameterList) bool {
	if pl == nil {
		return true
	}
	for _, b := range pl.List {
		if _, ok := b.Target.(*ast.Identifier); !ok || b.Initializer != nil {
			return false
		}
	}
	if pl.Rest != nil {
		if _, ok := pl.Rest.(*ast.Identifier); !ok {
			return false
		}
	}
	return true
}
