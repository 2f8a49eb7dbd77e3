package sandbox

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/dop251/goja"
	"github.com/dop251/goja/unistring"
)

// The typed arrays, ArrayBuffer and Reflect are reached through their global
// names alone (a typed array's buffer, and so the original ArrayBuffer, is
// reached through a typed array), and building them with their guards was a
// third of a runtime's set-up, for phases that nearly never name them.
//
// goja builds a global on the first touch of its name: a read, but also a
// definition or a deletion, so no guard can be put in front of one through
// goja's API without building it. lazyGlobals puts an accessor in the
// global object's own table where goja would build the built-in, without
// building it. Every route to the name (the name itself, globalThis[name],
// Reflect.get, a descriptor's getter, with) finds the accessor; its first
// read takes the accessors of its group out of the table, lets goja build
// the originals and guards them as installGuards did eagerly, then returns
// the guarded value. Until then the originals exist nowhere. Assigning
// replaces the accessor with the value, as it replaces a built-in; deleting
// or redefining one leaves its original unbuilt for good.
//
// The table is an unexported field of goja's; its layout is probed once per
// process (tableLayout), and where it is not what this file expects the
// guards are installed eagerly, as before.

// lazyNames are the globals installed on first read, in their groups: the
// typed arrays and ArrayBuffer (one group: the buffer of a typed array
// reaches ArrayBuffer), Reflect, and JSON.
var lazyNames = func() []string {
	n := append([]string(nil), typedArrays[:]...)
	return append(n, "ArrayBuffer", "Reflect", "JSON")
}()

const (
	lazyBuffer  = len(typedArrays) // index of ArrayBuffer in lazyNames
	lazyReflect = lazyBuffer + 1
	lazyJSON    = lazyReflect + 1
)

// tableLayout is where goja keeps an object's own properties, found by
// probeLayout.
type tableLayout struct {
	self   []int        // goja.Object.self, the object's implementation
	global reflect.Type // the global object's implementation type
	vals   []int        // its own-property map
	keys   []reflect.Value
	// A property's entry (goja's valueProperty) and the fields an accessor
	// sets: whether it is one, configurable, its getter and setter. goja
	// turns an accessor into a data property in place.
	prop                        reflect.Type
	isAcc, conf, getter, setter []int
	// The same fields' offsets in the entry, for entries made in a block
	// (entryAt), and the type of a block of one entry per lazy name.
	accOff, confOff, getOff, setOff uintptr
	block                           reflect.Type
}

var layout = sync.OnceValue(probeLayout)

// probeLayout finds goja's property table of the global object and the
// entry of an accessor in it, and checks on a runtime of its own that an
// entry made here is the one goja makes for a configurable, non-enumerable
// accessor, that a read of the name calls its getter, that a definition is
// seen, and that taking the entry out lets goja build the original. It
// returns nil when anything is not as expected.
func probeLayout() (lay *tableLayout) {
	defer func() {
		if recover() != nil {
			lay = nil
		}
	}()
	sf, ok := reflect.TypeOf(goja.Object{}).FieldByName("self")
	if !ok || sf.Type.Kind() != reflect.Interface {
		return nil
	}
	lay = &tableLayout{self: sf.Index}
	vm := goja.New()
	global := vm.GlobalObject()
	impl := lay.impl(global)
	if impl.Kind() != reflect.Pointer || impl.Elem().Kind() != reflect.Struct {
		return nil
	}
	valueType := reflect.TypeOf((*goja.Value)(nil)).Elem()
	f, ok := impl.Type().Elem().FieldByName("values")
	if !ok || f.Type.Kind() != reflect.Map || f.Type.Key() != reflect.TypeOf(unistring.String("")) || f.Type.Elem() != valueType {
		return nil
	}
	lay.global, lay.vals = impl.Type(), f.Index
	table := lay.values(global)
	for _, n := range lazyNames {
		lay.keys = append(lay.keys, reflect.ValueOf(n).Convert(table.Type().Key()))
	}

	// goja's own entry for such an accessor, to copy the layout from and
	// compare with.
	marker := vm.NewObject()
	get := vm.ToValue(func(goja.FunctionCall) goja.Value { return marker }).(*goja.Object)
	scratch := vm.NewObject()
	if scratch.DefineAccessorProperty(lazyNames[0], get, get, goja.FLAG_TRUE, goja.FLAG_FALSE) != nil {
		return nil
	}
	sImpl := lay.impl(scratch)
	sf, ok = sImpl.Type().Elem().FieldByName("values")
	if !ok || sf.Type != f.Type {
		return nil
	}
	sVals := sImpl.Elem().FieldByIndex(sf.Index)
	theirs := reflect.NewAt(sVals.Type(), unsafe.Pointer(sVals.UnsafeAddr())).Elem().MapIndex(lay.keys[0]).Elem()
	if theirs.Kind() != reflect.Pointer || theirs.Elem().Kind() != reflect.Struct {
		return nil
	}
	lay.prop = theirs.Type().Elem()
	field := func(name string, t reflect.Type, off *uintptr) []int {
		f, found := lay.prop.FieldByName(name)
		if !found || f.Type != t || len(f.Index) != 1 {
			ok = false
		}
		*off = f.Offset
		return f.Index
	}
	boolType, objType := reflect.TypeOf(true), reflect.TypeOf(get)
	lay.isAcc, lay.conf = field("accessor", boolType, &lay.accOff), field("configurable", boolType, &lay.confOff)
	lay.getter, lay.setter = field("getterFunc", objType, &lay.getOff), field("setterFunc", objType, &lay.setOff)
	if lay.block = reflect.ArrayOf(len(lazyNames), lay.prop); !ok {
		return nil
	}
	ours := lay.entry(get)
	if !reflect.DeepEqual(ours.Elem().Interface(), theirs.Elem().Interface()) || !lay.isAccessor(theirs, get) {
		return nil
	}

	table.SetMapIndex(lay.keys[0], ours)
	if v := global.Get(lazyNames[0]); v != marker {
		return nil
	}
	_ = global.DefineDataProperty(lazyNames[0], marker, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	if lay.isAccessor(table.MapIndex(lay.keys[0]), get) {
		return nil
	}
	table.SetMapIndex(lay.keys[0], reflect.Value{})
	if o, ok := global.Get(lazyNames[0]).(*goja.Object); !ok || o.ClassName() != "Function" {
		return nil
	}
	return lay
}

// entry is a new configurable, non-enumerable accessor entry with get as
// its getter and setter: a pointer to goja's valueProperty.
func (lay *tableLayout) entry(get *goja.Object) reflect.Value {
	p := reflect.New(lay.prop)
	lay.entryAt(p.UnsafePointer(), get)
	return p
}

// entryAt makes the zero entry at p the accessor entry makes; the probe
// compares the two with goja's own.
func (lay *tableLayout) entryAt(p unsafe.Pointer, get *goja.Object) {
	*(*bool)(unsafe.Add(p, lay.accOff)) = true
	*(*bool)(unsafe.Add(p, lay.confOff)) = true
	*(**goja.Object)(unsafe.Add(p, lay.getOff)) = get
	*(**goja.Object)(unsafe.Add(p, lay.setOff)) = get
}

// isAccessor reports whether the table entry e (an interface, as a map
// holds it, or the pointer) is an accessor with getter get.
func (lay *tableLayout) isAccessor(e reflect.Value, get *goja.Object) bool {
	if e.IsValid() && e.Kind() == reflect.Interface {
		e = e.Elem()
	}
	if !e.IsValid() || e.Kind() != reflect.Pointer || e.IsNil() {
		return false
	}
	p := e.Elem()
	return p.FieldByIndex(lay.isAcc).Bool() && p.FieldByIndex(lay.getter).Pointer() == reflect.ValueOf(get).Pointer()
}

// impl is o's implementation (goja.Object.self).
func (lay *tableLayout) impl(o *goja.Object) reflect.Value {
	f := reflect.ValueOf(o).Elem().FieldByIndex(lay.self)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Elem()
}

// values is the own-property map of the global object o, writable.
func (lay *tableLayout) values(o *goja.Object) reflect.Value {
	f := lay.impl(o).Elem().FieldByIndex(lay.vals)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// lazyGlobals is one runtime's lazy globals.
type lazyGlobals struct {
	g       *guard
	lay     *tableLayout
	global  *goja.Object
	table   reflect.Value // the global object's own-property map
	entries []reflect.Value
	getters []*goja.Object
	typed   bool // the typed-array group was installed
	reflect bool // Reflect was
	json    bool // JSON was
}

// plantLazyGlobals puts the lazy accessors in vm's global object. It
// reports false when the layout is unknown: the caller installs the guards
// now.
func (g *guard) plantLazyGlobals(global *goja.Object) bool {
	lay := layout()
	if lay == nil || lay.impl(global).Type() != lay.global {
		return false
	}
	lz := &lazyGlobals{g: g, lay: lay, global: global, table: lay.values(global), entries: make([]reflect.Value, len(lazyNames)), getters: make([]*goja.Object, len(lazyNames))}
	// The entries, and the proxies' handlers, are made in one block each.
	block := reflect.New(lay.block).UnsafePointer()
	traps := make([]goja.ProxyTrapConfig, len(lazyNames))
	// The probe found the table's type to be exactly this one: written as a
	// Go map, an entry is not checked against goja.Value by reflect.
	table := *(*map[unistring.String]goja.Value)(unsafe.Pointer(lz.table.UnsafeAddr()))
	for i, name := range lazyNames {
		// One function per name serves as getter and setter: a proxy is the
		// cheapest callable goja makes, and it tells the name by its handler.
		traps[i].Apply = func(_ *goja.Object, _ goja.Value, args []goja.Value) goja.Value { return lz.access(i, args) }
		get := g.vm.ToValue(g.vm.NewProxy(g.hasInstance.(*goja.Object), &traps[i])).(*goja.Object)
		e := unsafe.Add(block, uintptr(i)*lay.prop.Size())
		lay.entryAt(e, get)
		lz.entries[i], lz.getters[i] = reflect.NewAt(lay.prop, e), get
		table[unistring.String(name)] = lz.entries[i].Interface().(goja.Value)
	}
	g.lazy = lz
	return true
}

// access is a read (no argument) or an assignment of lazy global i.
func (lz *lazyGlobals) access(i int, args []goja.Value) goja.Value {
	name := lazyNames[i]
	if len(args) > 0 {
		// An assignment makes the name a plain property, as it does a
		// built-in's; the original is then never built.
		if lz.ours(i) {
			_ = lz.global.DefineDataProperty(name, args[0], goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		return goja.Undefined()
	}
	switch i {
	case lazyReflect:
		lz.installReflect()
	case lazyJSON:
		lz.installJSON()
	default:
		lz.installTyped()
	}
	return lz.global.Get(name)
}

// ours reports whether global i still holds the accessor put there: the
// same entry, still that accessor (a definition changes an entry in place).
func (lz *lazyGlobals) ours(i int) bool {
	v := lz.table.MapIndex(lz.lay.keys[i])
	return v.IsValid() && v.Interface() == lz.entries[i].Interface() && lz.lay.isAccessor(v, lz.getters[i])
}

// unplant takes global i's accessor out of the table, if it is still there,
// so that the next read has goja build the original.
func (lz *lazyGlobals) unplant(i int) bool {
	if !lz.ours(i) {
		return false
	}
	lz.table.SetMapIndex(lz.lay.keys[i], reflect.Value{})
	return true
}

// original is the built-in goja builds for global i, when its accessor was
// still there; nil otherwise (deleted, assigned or redefined: the original
// was never built).
func (lz *lazyGlobals) original(i int) *goja.Object {
	if !lz.unplant(i) {
		return nil
	}
	o, _ := lz.global.Get(lazyNames[i]).(*goja.Object)
	return o
}

func (lz *lazyGlobals) installTyped() {
	if lz.typed {
		return
	}
	lz.typed = true
	var targets [len(typedArrays)]*goja.Object
	for i := range typedArrays {
		targets[i] = lz.original(i)
	}
	buf := lz.original(lazyBuffer)
	lz.g.installTyped(lz.global, &targets, buf, buf != nil)
}

func (lz *lazyGlobals) installReflect() {
	if lz.reflect {
		return
	}
	lz.reflect = true
	if r := lz.original(lazyReflect); r != nil {
		lz.g.installReflectGuards(r)
	}
}

func (lz *lazyGlobals) installJSON() {
	if lz.json {
		return
	}
	lz.json = true
	if json := lz.original(lazyJSON); json != nil {
		lz.g.installJSON(json)
	}
}

// borrowParse is the original JSON.parse of a runtime whose script deleted
// or replaced JSON before reading it: goja builds the original under the
// name for a moment, and the script's entry is put back, so the script
// never sees it.
func (lz *lazyGlobals) borrowParse() goja.Callable {
	key := lz.lay.keys[lazyJSON]
	saved := lz.table.MapIndex(key)
	lz.table.SetMapIndex(key, reflect.Value{})
	var parse goja.Callable
	if json, ok := lz.global.Get("JSON").(*goja.Object); ok {
		parse, _ = goja.AssertFunction(json.Get("parse"))
	}
	lz.table.SetMapIndex(key, saved)
	return parse
}
