package sandbox

import (
	"maps"
	"reflect"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/dop251/goja"
	"github.com/dop251/goja/unistring"
)

// String.prototype, Array.prototype and Function.prototype are goja
// "templated" objects: a method is built (a native function, its name and
// length) the first time anything touches its name, by a factory in the
// object's template, and every route to the method (a read, a descriptor,
// a definition, a deletion, the keys of the object) goes through that
// factory first. Building each guarded original to put a proxy in front of
// it was a fifth of a runtime's set-up, for methods most phases never call.
//
// So the guard goes in the factory instead: these prototypes get a copy of
// their template (made once per process, guardedTemplates) whose factory
// for a guarded name builds the original and hands goja the proxy in its
// place; the factory finds the runtime's guard by the runtime it builds for
// (guardOf). The original is never stored where the script could reach it:
// goja keeps what the factory returns, and a factory without a guard makes
// the method undefined. String.prototype[Symbol.iterator]'s factory guards
// the string iterators the same way. What goja built before the swap
// (nothing, in a new runtime) is guarded eagerly, as is everything when the
// layout is not the one expected.
//
// RegExp.prototype stays guarded eagerly: goja builds it in one piece,
// not from a template, for a regular expression literal as for the RegExp
// global, and a literal can come from code compiled at run time (eval,
// Function). So do the array iterators: an arguments object's
// Symbol.iterator reaches them without Array.prototype.
//
// The template and the property entry are unexported types of goja's;
// their layout is probed once per process (protoLayout).

// protoGuard is one guarded method of a prototype.
type protoGuard struct {
	name, what string
	f          guardFn
}

// The guarded methods of String.prototype, Array.prototype and
// Function.prototype.
var (
	stringProtoGuards = [...]protoGuard{
		{"concat", "String.prototype.concat", (*guard).concat},
		{"replace", "String.prototype.replace", (*guard).stringReplace},
		{"replaceAll", "String.prototype.replaceAll", (*guard).stringReplace},
		{"split", "String.prototype.split", (*guard).stringSplit},
		{"repeat", "String.prototype.repeat", (*guard).repeat},
		{"padStart", "String.prototype.padStart", (*guard).pad},
		{"padEnd", "String.prototype.padEnd", (*guard).pad},
	}
	arrayProtoGuards = func() []protoGuard {
		var gs []protoGuard
		for _, m := range lengthGuarded {
			gs = append(gs, protoGuard{m[0], m[1], (*guard).lengthGuard})
		}
		return append(gs,
			protoGuard{"concat", "Array.prototype.concat", (*guard).arrayConcat},
			protoGuard{"flat", "Array.prototype.flat", (*guard).flat},
			protoGuard{"flatMap", "Array.prototype.flatMap", (*guard).flatMap},
			// join and toLocaleString are the host's (guards.go, join).
			protoGuard{"join", "Array.prototype.join", (*guard).join},
			protoGuard{"toLocaleString", "Array.prototype.toLocaleString", (*guard).join},
			protoGuard{"fill", "Array.prototype.fill", (*guard).fill},
		)
	}()
	functionProtoGuards = [...]protoGuard{
		{"bind", "Function.prototype.bind", (*guard).bind},
		{"apply", "Function.prototype.apply", (*guard).argList1},
	}
)

// factory is goja's templatePropFactory: what a template builds a property
// with (a *valueProperty for a method).
type factory = func(*goja.Runtime) goja.Value

// factories is the layout of goja's objectTemplate.props.
type factories = map[unistring.String]factory

// protoLayoutT is where goja keeps a templated object's template, the
// template's factories, the object's own properties, and the value of a
// property entry.
type protoLayoutT struct {
	self     []int                 // goja.Object.self
	impls    map[reflect.Type]impl // the templated implementations seen
	tmplType reflect.Type          // goja.objectTemplate
	props    []int                 // objectTemplate.props
	symProps []int                 // objectTemplate.symProps
	prop     reflect.Type          // goja.valueProperty
	value    []int                 // valueProperty.value
}

// impl is where a templated implementation keeps its template and its own
// properties, named and symbols (nil until goja builds them).
type impl struct{ tmpl, values, symValues []int }

var protoLayout = sync.OnceValue(probeProtoLayout)

// probeProtoLayout finds the fields, then checks on a runtime of its own
// that a template swapped in is the one goja builds from, by every route a
// test here takes. Nil when anything is not as expected.
func probeProtoLayout() (lay *protoLayoutT) {
	defer func() {
		if recover() != nil {
			lay = nil
		}
	}()
	sf, ok := reflect.TypeOf(goja.Object{}).FieldByName("self")
	if !ok || sf.Type.Kind() != reflect.Interface {
		return nil
	}
	lay = &protoLayoutT{self: sf.Index, impls: map[reflect.Type]impl{}}
	vm := goja.New()
	arr := vm.Get("Array").(*goja.Object)
	objs := []*goja.Object{vm.ToValue("").ToObject(vm).Prototype(), arr.Get("prototype").(*goja.Object), arr.Prototype()}
	if !lay.probeFields(objs) || !lay.probeFactories(vm, objs) || !lay.probeSwap(vm, objs) {
		return nil
	}
	return lay
}

// probeFields finds the template and the own properties of the templated
// implementations of objs, and the factories of their template.
func (lay *protoLayoutT) probeFields(objs []*goja.Object) bool {
	valueType := reflect.TypeOf((*goja.Value)(nil)).Elem()
	keyType := reflect.TypeOf(unistring.String(""))
	for _, o := range objs {
		it := lay.implOf(o).Type()
		if it.Kind() != reflect.Pointer || it.Elem().Kind() != reflect.Struct {
			return false
		}
		tf, ok1 := it.Elem().FieldByName("tmpl")
		vf, ok2 := it.Elem().FieldByName("values")
		sf, ok3 := it.Elem().FieldByName("symValues")
		if !ok1 || !ok2 || !ok3 || sf.Type.Kind() != reflect.Pointer ||
			tf.Type.Kind() != reflect.Pointer || tf.Type.Elem().Kind() != reflect.Struct ||
			vf.Type.Kind() != reflect.Map || vf.Type.Key() != keyType || vf.Type.Elem() != valueType {
			return false
		}
		if lay.tmplType == nil {
			lay.tmplType = tf.Type.Elem()
		} else if lay.tmplType != tf.Type.Elem() {
			return false
		}
		lay.impls[it] = impl{tmpl: tf.Index, values: vf.Index, symValues: sf.Index}
	}
	pf, ok := lay.tmplType.FieldByName("props")
	if !ok || pf.Type.Kind() != reflect.Map || pf.Type.Key() != keyType || pf.Type.Elem().Kind() != reflect.Func ||
		!pf.Type.Elem().ConvertibleTo(reflect.TypeOf(factory(nil))) {
		return false
	}
	lay.props = pf.Index
	sp, ok := lay.tmplType.FieldByName("symProps")
	if !ok || sp.Type.Kind() != reflect.Map || sp.Type.Key() != reflect.TypeOf((*goja.Symbol)(nil)) ||
		sp.Type.Elem() != pf.Type.Elem() {
		return false
	}
	lay.symProps = sp.Index
	return true
}

// probeFactories checks that each guarded method's factory, and that of
// String.prototype[Symbol.iterator], makes an entry holding a function,
// and finds the entry's value.
func (lay *protoLayoutT) probeFactories(vm *goja.Runtime, objs []*goja.Object) bool {
	valueType := reflect.TypeOf((*goja.Value)(nil)).Elem()
	for i, gs := range protoGuardSets {
		t := lay.factories(lay.template(objs[i]))
		if i == 0 {
			gs = append(gs[:len(gs):len(gs)], protoGuard{name: "@@iterator"})
		}
		for _, pg := range gs {
			orig := t[unistring.String(pg.name)]
			if pg.name == "@@iterator" {
				orig = lay.symFactories(lay.template(objs[i]))[goja.SymIterator]
			}
			if orig == nil {
				return false
			}
			p := reflect.ValueOf(orig(vm))
			if p.Kind() != reflect.Pointer || p.Elem().Kind() != reflect.Struct {
				return false
			}
			if lay.prop == nil {
				lay.prop = p.Type().Elem()
				vf, ok := lay.prop.FieldByName("value")
				if !ok || vf.Type != valueType {
					return false
				}
				lay.value = vf.Index
			}
			if p.Type().Elem() != lay.prop {
				return false
			}
			if o, ok := lay.valueOf(p.Interface().(goja.Value)).(*goja.Object); !ok || o.ClassName() != "Function" {
				return false
			}
		}
	}
	return true
}

// probeSwap gives objs templates of their own whose concat (bind) is a
// marker, and checks that goja builds from them.
func (lay *protoLayoutT) probeSwap(vm *goja.Runtime, objs []*goja.Object) bool {
	marker := vm.ToValue(func(goja.FunctionCall) goja.Value { return nil })
	for i, o := range objs {
		name := [...]string{"concat", "concat", "bind"}[i]
		t, _ := lay.own(o)
		if t == nil || lay.has(o, name) {
			return false
		}
		inner := t[unistring.String(name)]
		t[unistring.String(name)] = func(r *goja.Runtime) goja.Value {
			p := inner(r)
			lay.setValue(p, marker)
			return p
		}
		if !o.Get(name).SameAs(marker) {
			return false
		}
	}
	syms := lay.symFactories(lay.template(objs[0]))
	inner := syms[goja.SymIterator]
	if inner == nil || !lay.symbolsUnbuilt(objs[0]) {
		return false
	}
	syms[goja.SymIterator] = func(r *goja.Runtime) goja.Value {
		p := inner(r)
		lay.setValue(p, marker)
		return p
	}
	if !objs[0].GetSymbol(goja.SymIterator).SameAs(marker) || lay.symbolsUnbuilt(objs[0]) {
		return false
	}
	check, err := vm.RunString(`(m => {
		const d = Object.getOwnPropertyDescriptor(String.prototype, "replace");
		const n = Object.getOwnPropertyNames(Array.prototype);
		return "".concat === m && [].concat === m && Object.bind === m &&
			d.writable && d.configurable && !d.enumerable && typeof d.value === "function" && d.value !== m &&
			n.includes("concat") && n.length > 20 && Array.prototype.concat === m;
	})`)
	if err != nil {
		return false
	}
	fn, ok := goja.AssertFunction(check)
	if !ok {
		return false
	}
	v, err := fn(goja.Undefined(), marker)
	return err == nil && v.ToBoolean()
}

// implOf is o's implementation (goja.Object.self), a pointer.
func (lay *protoLayoutT) implOf(o *goja.Object) reflect.Value {
	f := reflect.ValueOf(o).Elem().FieldByIndex(lay.self)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Elem()
}

// field is the field at idx of the struct p points to, writable.
func field(p reflect.Value, idx []int) reflect.Value {
	f := p.Elem().FieldByIndex(idx)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// template is the template pointer of o, writable; invalid when o is not a
// templated object of a known layout.
func (lay *protoLayoutT) template(o *goja.Object) reflect.Value {
	p := lay.implOf(o)
	in, ok := lay.impls[p.Type()]
	if !ok {
		return reflect.Value{}
	}
	return field(p, in.tmpl)
}

// has reports whether goja already built o's own property name.
func (lay *protoLayoutT) has(o *goja.Object, name string) bool {
	_, built := lay.builtOf(o)[unistring.String(name)]
	return built
}

// builtOf is o's own properties as goja built them so far; nil when o is
// not a templated object of a known layout.
func (lay *protoLayoutT) builtOf(o *goja.Object) map[unistring.String]goja.Value {
	p := lay.implOf(o)
	in, ok := lay.impls[p.Type()]
	if !ok {
		return nil
	}
	// The probe found the map's type to be exactly this one.
	return *(*map[unistring.String]goja.Value)(unsafe.Pointer(field(p, in.values).UnsafeAddr()))
}

// symbolsUnbuilt reports whether goja has not built o's own symbols yet.
func (lay *protoLayoutT) symbolsUnbuilt(o *goja.Object) bool {
	p := lay.implOf(o)
	in, ok := lay.impls[p.Type()]
	return ok && field(p, in.symValues).IsNil()
}

// symFactories is the symProps map of the template t points to.
func (lay *protoLayoutT) symFactories(t reflect.Value) map[*goja.Symbol]factory {
	f := field(t, lay.symProps)
	return *(*map[*goja.Symbol]factory)(unsafe.Pointer(f.UnsafeAddr()))
}

// factories is the props map of the template t points to.
func (lay *protoLayoutT) factories(t reflect.Value) factories {
	f := field(t, lay.props)
	return *(*factories)(unsafe.Pointer(f.UnsafeAddr()))
}

// own gives o a template of its own, a copy of its template with a copy of
// its factories, and returns those factories to change, named and symbols.
// Nil when o is not a templated object of a known layout.
func (lay *protoLayoutT) own(o *goja.Object) (factories, map[*goja.Symbol]factory) {
	t := lay.template(o)
	if !t.IsValid() || t.IsNil() {
		return nil, nil
	}
	mine, props, syms := lay.copyTemplate(t)
	t.Set(reflect.NewAt(lay.tmplType, mine.UnsafePointer()))
	return props, syms
}

// valueOf is the value of the property entry p.
func (lay *protoLayoutT) valueOf(p goja.Value) goja.Value {
	return field(reflect.ValueOf(p), lay.value).Interface().(goja.Value)
}

func (lay *protoLayoutT) setValue(p, v goja.Value) {
	field(reflect.ValueOf(p), lay.value).Set(reflect.ValueOf(&v).Elem())
}

// copyTemplate is a copy of the template t points to, with copies of its
// factories, named and symbols, to change.
func (lay *protoLayoutT) copyTemplate(t reflect.Value) (reflect.Value, factories, map[*goja.Symbol]factory) {
	mine := reflect.New(lay.tmplType)
	mine.Elem().Set(reflect.NewAt(lay.tmplType, t.UnsafePointer()).Elem())
	f := field(mine, lay.props)
	props := (*factories)(unsafe.Pointer(f.UnsafeAddr()))
	*props = maps.Clone(*props)
	f = field(mine, lay.symProps)
	syms := (*map[*goja.Symbol]factory)(unsafe.Pointer(f.UnsafeAddr()))
	*syms = maps.Clone(*syms)
	return mine, *props, *syms
}

// guardedTemplate is a prototype's template in goja (from) and the copy
// whose factories guard (to). The copies are the process's, shared by its
// runtimes: a factory finds the runtime's guard by the runtime it builds
// for (guardOf).
type guardedTemplate struct{ from, to unsafe.Pointer }

// protoGuardSets are the guarded methods of String.prototype,
// Array.prototype and Function.prototype, in that order.
var protoGuardSets = [3][]protoGuard{stringProtoGuards[:], arrayProtoGuards, functionProtoGuards[:]}

// guardedTemplates are those of String.prototype, Array.prototype and
// Function.prototype; nil when the layout is not known.
var guardedTemplates = sync.OnceValue(func() *[3]guardedTemplate {
	lay := protoLayout()
	if lay == nil {
		return nil
	}
	vm := goja.New()
	arr := vm.Get("Array").(*goja.Object)
	var out [3]guardedTemplate
	for i, o := range [3]*goja.Object{vm.ToValue("").ToObject(vm).Prototype(), arr.Get("prototype").(*goja.Object), arr.Prototype()} {
		t := lay.template(o)
		if !t.IsValid() || t.IsNil() {
			return nil
		}
		mine, props, syms := lay.copyTemplate(t)
		for j := range protoGuardSets[i] {
			pg := &protoGuardSets[i][j]
			props[unistring.String(pg.name)] = lay.guardedMethod(props[unistring.String(pg.name)], pg)
		}
		if i == 0 {
			syms[goja.SymIterator] = lay.guardedStringIterator(syms[goja.SymIterator])
		}
		out[i] = guardedTemplate{from: t.UnsafePointer(), to: mine.UnsafePointer()}
	}
	return &out
})

// guardedMethod is the factory of a guarded method: goja's, orig, then the
// guard in place of the original. Never the original: without the
// runtime's guard (or if the method were not a function) it is undefined.
func (lay *protoLayoutT) guardedMethod(orig factory, pg *protoGuard) factory {
	return func(r *goja.Runtime) goja.Value {
		p := orig(r)
		var v goja.Value
		if g := guardOf(r); g != nil {
			v = g.wrapValue(lay.valueOf(p), pg.what, pg.f)
		}
		if v == nil {
			v = goja.Undefined()
		}
		lay.setValue(p, v)
		return p
	}
}

// guardedStringIterator is the factory of String.prototype[Symbol.iterator]:
// goja builds the string iterators' prototype for the first string
// iterator, and only that function makes one, so their next is guarded
// when it is built. Without the guard the function is undefined.
func (lay *protoLayoutT) guardedStringIterator(orig factory) factory {
	return func(r *goja.Runtime) goja.Value {
		p := orig(r)
		if g := guardOf(r); g == nil || !g.iteratorNext(lay.valueOf(p), r.ToValue(""), "a string iterator") {
			lay.setValue(p, goja.Undefined())
		}
		return p
	}
}

// guardsByRuntime finds a runtime's guard for the shared templates'
// factories: weak both ways, so that it keeps neither alive, and an entry
// goes with its runtime. A runtime in use is held by its run, and its guard
// by the run's fresh.
var guardsByRuntime sync.Map // weak.Pointer[goja.Runtime] -> weak.Pointer[guard]

func (g *guard) register() {
	if g.registered {
		return
	}
	g.registered = true
	k := weak.Make(g.vm)
	guardsByRuntime.Store(k, weak.Make(g))
	runtime.AddCleanup(g.vm, func(k weak.Pointer[goja.Runtime]) { guardsByRuntime.Delete(k) }, k)
}

func guardOf(r *goja.Runtime) *guard {
	v, ok := guardsByRuntime.Load(weak.Make(r))
	if !ok {
		return nil
	}
	return v.(weak.Pointer[guard]).Value()
}

// guardProto guards the methods of the prototype o, protoGuardSets[set]:
// by giving it the shared guarded template when the layout is known and
// goja has built none of them yet, else now.
func (g *guard) guardProto(o *goja.Object, set int) {
	gs := protoGuardSets[set]
	if lay, gt := protoLayout(), guardedTemplates(); lay != nil && gt != nil {
		values := lay.builtOf(o)
		built := values == nil
		for i := range gs {
			_, b := values[unistring.String(gs[i].name)]
			built = built || b
		}
		if t := lay.template(o); !built && t.IsValid() && t.UnsafePointer() == gt[set].from {
			g.register()
			t.Set(reflect.NewAt(lay.tmplType, gt[set].to))
			return
		}
	}
	for i := range gs {
		g.wrap(o, gs[i].name, gs[i].what, gs[i].f)
	}
}

// lazyStringIterator reports whether the string iterators will be guarded
// when goja builds String.prototype[Symbol.iterator] (str has the guarded
// template and has not built its symbols); if not, the caller guards them
// now.
func (g *guard) lazyStringIterator(str *goja.Object) bool {
	lay, gt := protoLayout(), guardedTemplates()
	if lay == nil || gt == nil {
		return false
	}
	t := lay.template(str)
	return t.IsValid() && t.UnsafePointer() == gt[0].to && lay.symbolsUnbuilt(str)
}
