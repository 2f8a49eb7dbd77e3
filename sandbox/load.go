package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// loadWallTime bounds the evaluation of a file's top level at load time; the
// top level only builds the declaration, so this is generous.
const loadWallTime = 2 * time.Second

// wfGlobal is the IIFE global esbuild assigns the module's exports to.
const wfGlobal = "__wf"

// Load transforms, compiles and validates a workflow file. Every problem is
// reported in one *ValidationError, syntax errors included. The file's top
// level runs in a worker process (remote.go), so a file that allocates
// without bound fails to load instead of taking keep down.
func Load(fileName string, src []byte, opts LoadOptions) (*Script, error) {
	if !inWorker {
		if len(src) > MaxSourceSize {
			return loadHere(fileName, src, opts) // the size diagnostic, without a worker
		}
		return watchFolders(loadRemote(fileName, src, opts))
	}
	return loadHere(fileName, src, opts)
}

// loadHere is Load in this process: the worker's side of it.
func loadHere(fileName string, src []byte, opts LoadOptions) (*Script, error) {
	return loadChecked(fileName, src, opts, false)
}

// loadChecked is loadHere; unnamedOK (tests only) lets through the uses of
// ctx the analysis cannot name, which Load refuses.
func loadChecked(fileName string, src []byte, opts LoadOptions, unnamedOK bool) (*Script, error) {
	if len(src) > MaxSourceSize {
		// Deploy hands the source over the API: the same cap as ReadFile.
		return nil, &ValidationError{Diagnostics: []Diagnostic{{File: fileName, Message: fmt.Sprintf(
			"the file is %d bytes, over the limit of %d bytes for a workflow file", len(src), MaxSourceSize)}}}
	}
	if d := nestingDiagnostic(fileName, src); d != nil {
		return nil, &ValidationError{Diagnostics: []Diagnostic{*d}}
	}
	loc := newLocator(fileName, string(src))
	code, diags := transform(fileName, src, wfGlobal)
	if len(diags) > 0 {
		return nil, &ValidationError{Diagnostics: diags}
	}
	prg, tree, err := compileAST(fileName, code)
	if err != nil {
		return nil, &ValidationError{Diagnostics: []Diagnostic{parseDiagnostic(loc, code, err)}}
	}
	s := &Script{
		FileName: fileName,
		Source:   src,
		program:  prg,
		methods:  methodTable(opts.Methods),
		opts:     opts,
		key:      scriptKey(fileName, src, opts),
	}
	v := &validator{loc: loc, opts: opts, unnamedOK: unnamedOK}
	wf, diag := evaluate(prg, func(wf evaluated) {
		v.vm = wf.vm
		s.Workflow, s.handlers = v.workflow(wf.decl)
	})
	if diag != nil {
		diag.File = fileName
		return nil, &ValidationError{Diagnostics: append(v.diags, *diag)}
	}
	s.bare = bareProgram(fileName, src, wf)
	s.facade = facadeTable(s.methods)
	s.Manifest = v.calls(tree, code, s.Workflow, s.handlers, opts)
	if len(v.diags) > 0 {
		return nil, &ValidationError{Diagnostics: v.diags}
	}
	s.Capabilities = s.Manifest.Names(true)
	if !unnamedOK {
		s.facade = namedConnectors(s.facade, s.Manifest)
	}
	return s, nil
}

// transform turns ESM (or TypeScript) into a script that leaves the default
// export in wfGlobal. The inline source map lets goja report positions in the
// file as written.
//
// With globalName empty the exports are dropped: no export helpers run, and
// the declaration is the one the file handed to Keep.workflow (bareProgram).
func transform(fileName string, src []byte, globalName string) (string, []Diagnostic) {
	loader := api.LoaderJS
	if ext := strings.ToLower(filepath.Ext(fileName)); ext == ".ts" || ext == ".mts" {
		loader = api.LoaderTS
	}
	res := api.Transform(string(src), api.TransformOptions{
		Loader:     loader,
		Format:     api.FormatIIFE,
		GlobalName: globalName,
		Target:     api.ES2017,
		Sourcemap:  api.SourceMapInline,
		Sourcefile: fileName,
	})
	var diags []Diagnostic
	for _, m := range res.Errors {
		d := Diagnostic{File: fileName, Message: m.Text}
		if l := m.Location; l != nil {
			d.Line = l.Line
			d.Col = 1
			if l.Column <= len(l.LineText) {
				d.Col = utf8.RuneCountInString(l.LineText[:l.Column]) + 1
			}
		}
		diags = append(diags, d)
	}
	return string(res.Code), diags
}

func compile(fileName, code string) (*goja.Program, error) {
	prg, _, err := compileAST(fileName, code)
	return prg, err
}

// compileAST is compile that also returns the parsed program, positions
// mapped to the file as written through its inline source map.
func compileAST(fileName, code string) (*goja.Program, *ast.Program, error) {
	// Only the inline map esbuild wrote may be read: a sourceMappingURL must
	// never make the parser open a file.
	noFiles := parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are read inline only")
	})
	// parser.ParseFile rather than goja.Parse: its ErrorList keeps the
	// positions, which parseDiagnostic maps back to the file as written.
	tree, err := parser.ParseFile(nil, fileName, code, 0, noFiles)
	if err != nil {
		return nil, nil, fmt.Errorf("parse transformed source: %w", err)
	}
	prg, err := goja.CompileAST(tree, false)
	if err != nil {
		return nil, nil, fmt.Errorf("compile: %w", err)
	}
	return prg, tree, nil
}

type evaluated struct {
	vm       *goja.Runtime
	decl     *goja.Object // the module's default export; nil if none
	workflow *goja.Object // the object last passed to Keep.workflow; nil if none
}

// evaluate runs the program's top level once in a scratch runtime, and
// read with what it declared. The top level is untrusted code too, so it
// runs under a wall time, a stack limit and the allocation guards; so does
// read, which runs the file's code again wherever the declaration holds a
// getter or a proxy, and what that code throws is the file's error.
func evaluate(prg *goja.Program, read func(evaluated)) (evaluated, *Diagnostic) {
	f := newFresh(keyOf(DefaultLimits()), func() {})
	vm, sup := f.vm, f.sup
	stop, _ := sup.watch(nil, loadWallTime, DefaultLimits().MaxHeapGrowth)
	defer stop()
	var wf evaluated
	_, err := vm.RunProgram(prg)
	if err == nil {
		err = scriptCall(vm, func() {
			wf = evaluated{vm: vm, decl: declaration(vm), workflow: f.workflow}
			if read != nil {
				read(wf)
			}
		})
	}
	if err != nil {
		return evaluated{}, evaluationDiagnostic(sup, err)
	}
	return wf, nil
}

// evaluationDiagnostic says why evaluating a file's top level (or reading
// its declaration) failed, where the file says so.
func evaluationDiagnostic(sup *supervisor, err error) *Diagnostic {
	if f := sup.failure(); f != nil {
		d := &Diagnostic{Message: "evaluating the file: " + f.Error()}
		var e *Error
		if errors.As(stoppedAt(f, err), &e) {
			d.Line, d.Col = e.Line, e.Col
		}
		return d
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		// its own text is only the stack: say what happened, and where
		line, col := framePos(so.Stack())
		return &Diagnostic{Line: line, Col: col, Message: fmt.Sprintf(
			"evaluating the file: the call stack grew past %d frames (a recursion without end?)", DefaultLimits().MaxStackDepth)}
	}
	line, col, msg := exceptionInfo(err)
	return &Diagnostic{Line: line, Col: col, Message: "evaluating the file: " + msg}
}

// bareProgram compiles the file a second time without the export helpers
// esbuild wraps around a module (they cost a run more than its own top level
// does) when that is safe: when the default export is exactly the object the
// file hands to Keep.workflow, and the bare program, evaluated once, hands
// over a declaration too. Otherwise it returns nil and runs use the program
// with the helpers.
func bareProgram(fileName string, src []byte, wf evaluated) *goja.Program {
	if wf.decl == nil || wf.workflow == nil || !wf.decl.SameAs(wf.workflow) {
		return nil
	}
	code, diags := transform(fileName, src, "")
	if len(diags) > 0 {
		return nil
	}
	prg, err := compile(fileName, code)
	if err != nil {
		return nil
	}
	if bare, diag := evaluate(prg, nil); diag != nil || bare.workflow == nil {
		return nil
	}
	return prg
}

// installKeep defines the Keep global: workflow() and consumer() hand back
// their argument, so the module's default export is the declaration itself.
// workflow() also records its argument in *workflow.
func installKeep(vm *goja.Runtime, workflow **goja.Object) {
	keep := vm.NewObject()
	_ = keep.Set("workflow", func(c goja.FunctionCall) goja.Value {
		arg := c.Argument(0)
		if o, ok := arg.(*goja.Object); ok {
			*workflow = o
		} else {
			*workflow = nil
		}
		return arg
	})
	_ = keep.Set("consumer", func(c goja.FunctionCall) goja.Value { return c.Argument(0) })
	_ = vm.Set("Keep", keep)
}

// declaration returns the module's default export, nil when there is none.
func declaration(vm *goja.Runtime) *goja.Object {
	mod, ok := vm.Get(wfGlobal).(*goja.Object)
	if !ok {
		return nil
	}
	decl, ok := mod.Get("default").(*goja.Object)
	if !ok {
		return nil
	}
	return decl
}

func methodTable(specs []MethodSpec) map[string]map[string]MethodKind {
	t := map[string]map[string]MethodKind{}
	for _, m := range specs {
		if t[m.Connector] == nil {
			t[m.Connector] = map[string]MethodKind{}
		}
		t[m.Connector][m.Method] = m.Kind
	}
	return t
}
