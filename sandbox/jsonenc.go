package sandbox

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// The runtime's JSON.stringify is replaced by this one, which follows the
// same algorithm (ECMA-262 SerializeJSONProperty) but counts what it writes:
// goja's own builds the whole text in one native call, so an array holding
// the same 60 MB string a hundred times grew to 6 GB before any heap sample
// could see it. It also bounds nesting: the Go recursion of a serializer
// over a structure nested a million deep overflows the goroutine stack,
// which is fatal to the process.

// jsonTooBig and jsonTooDeep unwind an encoding that hit a cap.
type jsonTooBig struct{ size int }
type jsonTooDeep struct{}

// jsonEncoder is one call of JSON.stringify.
type jsonEncoder struct {
	vm       *goja.Runtime
	isArray  goja.Callable // the runtime's own Array.isArray (proxies included)
	halted   func() bool
	max      int // bytes of output
	maxDepth int
	truncate bool // over max, write what fits of a string before stopping

	replacer goja.Callable
	props    []string // the property list of an array replacer; nil: none
	gap      string
	indent   string

	buf   []byte
	stack []*goja.Object
	steps int
}

// write adds s, refusing before the text would exceed max.
func (e *jsonEncoder) write(s string) {
	e.reserve(len(s))
	e.buf = append(e.buf, s...)
}

func (e *jsonEncoder) reserve(n int) {
	need := len(e.buf) + n
	if need > e.max {
		panic(jsonTooBig{need})
	}
	if need > cap(e.buf) {
		// Grow by doubling, but never past max: append's own doubling
		// would allocate up to twice the limit.
		e.buf = slices.Grow(e.buf, min(max(2*cap(e.buf), need), e.max)-len(e.buf))
	}
}

// truncate drops what was written after off (an omitted property).
func (e *jsonEncoder) cutTo(off int) { e.buf = e.buf[:off] }

// encode serializes v; ok is false when v encodes to undefined.
func (e *jsonEncoder) encode(v goja.Value) (ok bool) {
	var holder *goja.Object // only a replacer sees it
	if e.replacer != nil {
		holder = e.vm.NewObject()
		_ = holder.Set("", v)
	}
	return e.property("", v, holder)
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// arrayLike is IsArray(o). Only a proxy needs the runtime's Array.isArray,
// which looks through it (and throws for a revoked one); any other object
// is an array exactly when its class is Array.
func (e *jsonEncoder) arrayLike(o *goja.Object) bool {
	if o.ClassName() == "Array" {
		return true
	}
	if o.ExportType() != proxyType {
		return false
	}
	arr, err := e.isArray(goja.Undefined(), o)
	if err != nil {
		panic(err)
	}
	return arr.ToBoolean()
}

// tick lets a long encoding notice an interrupt (the wall time): a native
// call is not interrupted by the runtime until it returns.
func (e *jsonEncoder) tick() {
	e.steps++
	if e.steps&1023 == 0 && e.halted() {
		panic(jsonTooDeep{}) // unwinds; the recorded failure is what the run reports
	}
}

func (e *jsonEncoder) property(key string, value goja.Value, holder *goja.Object) bool {
	e.tick()
	if value == nil {
		value = goja.Undefined()
	}
	value = e.resolve(key, value, holder)
	switch {
	case value == nil || goja.IsUndefined(value):
		return false
	case goja.IsNull(value):
		e.write("null")
		return true
	}
	if _, sym := value.(*goja.Symbol); sym {
		return false
	}
	o, isObj := value.(*goja.Object)
	if !isObj {
		switch x := value.Export().(type) {
		case bool:
			e.write(strconv.FormatBool(x))
		case string:
			e.quote(value)
		case int64:
			e.write(value.String())
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				e.write("null")
			} else {
				e.write(value.String())
			}
		case *big.Int:
			panic(e.vm.NewTypeError("Do not know how to serialize a BigInt"))
		default: // a symbol
			return false
		}
		return true
	}
	if o.ClassName() == "RawJSON" {
		e.write(o.Get("rawJSON").String())
		return true
	}
	if _, callable := goja.AssertFunction(o); callable {
		return false
	}
	for _, seen := range e.stack {
		if seen.SameAs(o) {
			panic(e.vm.NewTypeError("Converting circular structure to JSON"))
		}
	}
	if len(e.stack) >= e.maxDepth {
		panic(jsonTooDeep{})
	}
	e.stack = append(e.stack, o)
	defer func() { e.stack = e.stack[:len(e.stack)-1] }()
	if e.arrayLike(o) {
		e.array(o)
	} else {
		e.object(o)
	}
	return true
}

// resolve is the value JSON.stringify writes for value: after its toJSON,
// the replacer, and a boxed primitive unboxed.
func (e *jsonEncoder) resolve(key string, value goja.Value, holder *goja.Object) goja.Value {
	if o, isObj := value.(*goja.Object); isObj || isBigInt(value) {
		var target *goja.Object
		if isObj {
			target = o
		} else {
			target = value.ToObject(e.vm)
		}
		if toJSON, ok := goja.AssertFunction(target.Get("toJSON")); ok {
			v, err := toJSON(value, e.vm.ToValue(key))
			if err != nil {
				panic(err)
			}
			value = v
		}
	}
	if e.replacer != nil {
		v, err := e.replacer(holder, e.vm.ToValue(key), value)
		if err != nil {
			panic(err)
		}
		value = v
	}
	if o, ok := value.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			value = e.vm.ToValue(o.ToNumber())
		case "String":
			value = o.ToString()
		case "Boolean", "BigInt":
			value = e.vm.ToValue(o.Export())
		}
	}
	return value
}

func (e *jsonEncoder) open() (stepback, separator string) {
	stepback = e.indent
	if e.gap == "" {
		return stepback, ","
	}
	e.indent += e.gap
	e.write("\n" + e.indent)
	return stepback, ",\n" + e.indent
}

func (e *jsonEncoder) close(stepback string) {
	if e.gap != "" {
		e.write("\n" + stepback)
		e.indent = stepback
	}
}

func (e *jsonEncoder) array(a *goja.Object) {
	n := toLength(a.Get("length"))
	if n == 0 {
		e.write("[]")
		return
	}
	// Every element writes at least 4 bytes ("null") and a separator:
	// refuse a huge sparse array before looping over it.
	e.reserve(int(min(n, math.MaxInt32)) * 2)
	e.write("[")
	stepback, sep := e.open()
	for i := int64(0); i < n; i++ {
		if i > 0 {
			e.write(sep)
		}
		k := strconv.FormatInt(i, 10)
		if !e.property(k, a.Get(k), a) {
			e.write("null")
		}
	}
	e.close(stepback)
	e.write("]")
}

func (e *jsonEncoder) object(o *goja.Object) {
	keys := e.props
	if keys == nil {
		keys = o.Keys()
	}
	e.write("{")
	mark := len(e.buf)
	stepback, sep := e.open()
	empty := true
	for _, k := range keys {
		off := len(e.buf)
		if !empty {
			e.write(sep)
		}
		e.quoteGo(k)
		if e.gap != "" {
			e.write(": ")
		} else {
			e.write(":")
		}
		if e.property(k, o.Get(k), o) {
			empty = false
		} else {
			e.cutTo(off)
		}
	}
	if empty {
		e.cutTo(mark)
		e.indent = stepback
	} else {
		e.close(stepback)
	}
	e.write("}")
}

// quote writes a string value as JSON, escaping lone surrogates the way
// well-formed JSON.stringify does. The length is checked before writing.
func (e *jsonEncoder) quote(v goja.Value) {
	s, ok := v.(goja.String)
	if !ok {
		e.quoteGo(v.String())
		return
	}
	if g := s.String(); len(g) == s.Length() { // ASCII: the Go string is exact
		e.quoteGo(g)
		return
	}
	n := s.Length()
	size := 2
	for i := 0; i < n; i++ {
		size += escapedLen(rune(s.CharAt(i)))
	}
	e.reserveString(size)
	e.buf = append(e.buf, '"')
	for i := 0; i < n; i++ {
		c := rune(s.CharAt(i))
		e.fits(c)
		if c >= 0xD800 && c <= 0xDBFF && i+1 < n {
			if d := rune(s.CharAt(i + 1)); d >= 0xDC00 && d <= 0xDFFF {
				e.buf = utf8.AppendRune(e.buf, 0x10000+(c-0xD800)<<10+(d-0xDC00))
				i++
				continue
			}
		}
		e.buf = appendEscaped(e.buf, c)
	}
	e.buf = append(e.buf, '"')
}

// quoteGo writes a Go string (valid UTF-8 or ASCII) as JSON.
func (e *jsonEncoder) quoteGo(s string) {
	size := 2
	for _, c := range s {
		size += escapedLen(c)
	}
	e.reserveString(size)
	e.buf = append(e.buf, '"')
	for _, c := range s {
		e.fits(c)
		e.buf = appendEscaped(e.buf, c)
	}
	e.buf = append(e.buf, '"')
}

// reserveString reserves room for a quoted string of size bytes; when
// truncating, a string that does not fit is written in part (fits stops
// it).
func (e *jsonEncoder) reserveString(size int) {
	if !e.truncate || len(e.buf)+size <= e.max {
		e.reserve(size)
		return
	}
	e.reserve(1)
}

// fits stops a truncating encoding before c would pass max.
func (e *jsonEncoder) fits(c rune) {
	if e.truncate && len(e.buf)+escapedLen(c) > e.max {
		panic(jsonTooBig{e.max + 1})
	}
}

// escapedLen is the bytes c takes in a JSON string; a lone surrogate is
// escaped, and a surrogate pair counts 3 bytes for each half (6 in all, over
// the 4 it takes: an upper bound is enough).
func escapedLen(c rune) int {
	switch {
	case c == '"' || c == '\\' || c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
		return 2
	case c < 0x20, c >= 0xD800 && c <= 0xDFFF:
		return 6
	}
	return utf8.RuneLen(c)
}

const hexDigits = "0123456789abcdef"

func appendEscaped(b []byte, c rune) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', byte(c))
	case '\b':
		return append(b, `\b`...)
	case '\t':
		return append(b, `\t`...)
	case '\n':
		return append(b, `\n`...)
	case '\f':
		return append(b, `\f`...)
	case '\r':
		return append(b, `\r`...)
	}
	if c < 0x20 || c >= 0xD800 && c <= 0xDFFF {
		return append(b, '\\', 'u', hexDigits[c>>12&0xF], hexDigits[c>>8&0xF], hexDigits[c>>4&0xF], hexDigits[c&0xF])
	}
	return utf8.AppendRune(b, c)
}

func isBigInt(v goja.Value) bool { return goja.IsBigInt(v) }

// toLength is ECMA-262 ToLength.
func toLength(v goja.Value) int64 {
	if v == nil || goja.IsUndefined(v) {
		return 0
	}
	f := v.ToFloat()
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f > 1<<53-1:
		return 1<<53 - 1
	}
	return int64(f)
}

// setup reads the replacer and space arguments of JSON.stringify.
func (e *jsonEncoder) setup(replacer, space goja.Value) {
	if r, ok := replacer.(*goja.Object); ok {
		if f, ok := goja.AssertFunction(r); ok {
			e.replacer = f
		} else if e.arrayLike(r) {
			n := toLength(r.Get("length"))
			if n > int64(e.max) { // each name takes a byte at least
				panic(jsonTooBig{int(min(n, math.MaxInt32))})
			}
			seen := map[string]bool{}
			e.props = []string{}
			for i := int64(0); i < n; i++ {
				e.tick()
				item := r.Get(strconv.FormatInt(i, 10))
				var name string
				if o, isObj := item.(*goja.Object); isObj {
					if c := o.ClassName(); c != "Number" && c != "String" {
						continue
					}
					name = item.String()
				} else if isString(item) || isNumber(item) {
					name = item.String()
				} else {
					continue
				}
				if !seen[name] {
					seen[name] = true
					e.props = append(e.props, name)
				}
			}
		}
	}
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = e.vm.ToValue(o.ToNumber())
		case "String":
			space = o.ToString()
		}
	}
	if _, isObj := space.(*goja.Object); isObj || space == nil {
		return
	}
	switch x := space.Export().(type) {
	case int64:
		e.gap = strings.Repeat(" ", int(max(0, min(x, 10))))
	case float64:
		if !math.IsNaN(x) {
			e.gap = strings.Repeat(" ", int(max(0, min(x, 10))))
		}
	case string:
		r := []rune(x) // ten UTF-16 units in the spec; characters here
		if len(r) > 10 {
			r = r[:10]
		}
		e.gap = string(r)
	}
}

// jsonLimits configure a JSON.stringify. They are a plain value read from
// the runtime's guard, not closures: a runtime makes three encoders.
type jsonLimits struct {
	max      int // bytes of output
	maxDepth int // levels of nesting
	// truncate: over max, return the text so far instead of failing (for
	// console lines, which are cut anyway, and the host's own encodings).
	truncate bool
	g        *guard // records a refusal and interrupts; says when the run halted
	cut      *bool  // truncating: set when the text stopped at max (may be nil)
}

func (lim *jsonLimits) tooBig(size int) {
	if !lim.truncate {
		lim.g.refuse("JSON.stringify", float64(size))
		return
	}
	if lim.cut != nil {
		*lim.cut = true
	}
}

// jsonStringify is a JSON.stringify for vm under lim. Over a limit it
// records the failure (the script cannot catch it) and returns undefined.
func jsonStringify(vm *goja.Runtime, isArray goja.Callable, lim jsonLimits) func(goja.FunctionCall) goja.Value {
	halted := lim.g.sup.halted
	return func(call goja.FunctionCall) (result goja.Value) {
		if halted() {
			return goja.Undefined()
		}
		e := &jsonEncoder{vm: vm, isArray: isArray, halted: halted, max: lim.max, maxDepth: lim.maxDepth, truncate: lim.truncate}
		defer func() {
			switch p := recover().(type) {
			case nil:
			case jsonTooBig:
				lim.tooBig(p.size)
				if lim.truncate {
					result = vm.ToValue(string(e.buf))
					return
				}
				result = goja.Undefined()
			case jsonTooDeep:
				if !halted() {
					lim.g.refuseDeep("JSON.stringify")
				}
				result = goja.Undefined()
			default:
				panic(p)
			}
		}()
		e.setup(call.Argument(1), call.Argument(2))
		if !e.encode(call.Argument(0)) {
			return goja.Undefined()
		}
		return vm.ToValue(string(e.buf))
	}
}
