package sandbox

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// The built-ins below build their result in one native call from arguments
// that may repeat one large value (s.concat(s, s, …), a 60 MB replacement
// used for every match, the same array in a concat many times): the size of
// the result is not bounded by what the script holds, so the heap sampler
// cannot catch it. Each is checked before it allocates, or counted while it
// runs through a callback of ours and stopped before it goes over.

// pieceBytes is what one element of a split result costs (a Value slot and
// the substring's header).
const pieceBytes = 48

// matchBytes is what goja keeps per match while it replaces or splits: the
// match positions, collected for all matches before the result is built.
const matchBytes = 64

// errLimit aborts a native loop once a limit was recorded; the run is
// already interrupted, so no script code sees it.
var errLimit = errors.New("sandbox limit")

// abort unwinds the native call in progress after a refusal.
func (g *guard) abort() { panic(g.vm.NewGoError(errLimit)) }

// guardFn is the check of one guarded built-in: orig is the original, what
// names it in messages. Every guardFn is a plain function, shared by all
// runtimes; only the proxy and its entry in guard.wrapped are per runtime.
type guardFn func(g *guard, orig goja.Callable, what string, c goja.FunctionCall) goja.Value

// wrapped is one built-in that a proxy of it now stands for.
type wrapped struct {
	target *goja.Object
	orig   goja.Callable // made on the first call: most built-ins are never called
	what   string
	f      guardFn
}

// wrapValue is a proxy of orig whose calls go through f. A proxy costs the
// runtime less than a host function (no own name and length: it reads the
// original's), and all of a runtime's proxies share one handler, which finds
// the check by the proxy's target.
func (g *guard) wrapValue(orig goja.Value, what string, f guardFn) goja.Value {
	o, ok := orig.(*goja.Object)
	if !ok || o.ClassName() != "Function" { // the built-ins are; AssertFunction would allocate
		return nil
	}
	g.wrapped = append(g.wrapped, wrapped{target: o, what: what, f: f})
	return g.vm.ToValue(g.vm.NewProxy(o, g.wrapTraps))
}

// wrap replaces obj[name] with a guarded proxy of it, non-enumerable like
// the built-in.
func (g *guard) wrap(obj *goja.Object, name, what string, f guardFn) {
	if v := g.wrapValue(obj.Get(name), what, f); v != nil {
		_ = obj.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

func (g *guard) wrapSym(obj *goja.Object, sym *goja.Symbol, what string, f guardFn) {
	if v := g.wrapValue(obj.GetSymbol(sym), what, f); v != nil {
		_ = obj.DefineDataPropertySymbol(sym, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

// applyWrapped is the apply trap of every guarded proxy. The proxies cannot
// be constructed: none of the originals is a constructor.
func (g *guard) applyWrapped(target *goja.Object, this goja.Value, args []goja.Value) goja.Value {
	for i := range g.wrapped {
		if w := &g.wrapped[i]; w.target == target {
			if g.sup.halted() {
				return goja.Undefined()
			}
			if w.orig == nil {
				if w.orig, _ = goja.AssertFunction(target); w.orig == nil {
					panic(g.vm.NewTypeError("not a function"))
				}
			}
			return w.f(g, w.orig, w.what, goja.FunctionCall{This: this, Arguments: args})
		}
	}
	panic(g.vm.NewTypeError("not a guarded built-in"))
}

// call calls orig, rethrowing what it throws as it was.
func call(orig goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := orig(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// installStringGuards guards String.prototype.concat, replace, replaceAll,
// split, repeat, padStart, padEnd (stringProtoGuards, lazyprotos.go) and
// RegExp.prototype[Symbol.replace], [Symbol.split], [Symbol.match].
//
// The iterator guards need Array.prototype, arrProto.
func (g *guard) installStringGuards(str, arrProto *goja.Object) {
	g.guardProto(str, 0)
	g.installIteratorGuards(str, arrProto)
	if re, ok := g.vm.Get("RegExp").(*goja.Object); ok {
		if proto, ok := re.Get("prototype").(*goja.Object); ok {
			g.wrapSym(proto, goja.SymReplace, "RegExp.prototype[Symbol.replace]", (*guard).regexpReplace)
			g.wrapSym(proto, goja.SymSplit, "RegExp.prototype[Symbol.split]", (*guard).regexpSplit)
			g.wrapSym(proto, goja.SymMatch, "RegExp.prototype[Symbol.match]", (*guard).regexpMatch)
		}
	}
}

// thisString is ToString(this) for a String.prototype method, converted
// once; null and undefined are left to the original to refuse.
func thisString(this goja.Value) (goja.Value, bool) {
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		return this, false
	}
	return this.ToString(), true
}

func (g *guard) concat(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	this, ok := thisString(c.This)
	if !ok {
		return call(orig, c.This, c.Arguments...)
	}
	size := float64(strLen(this))
	args := make([]goja.Value, len(c.Arguments))
	for i, a := range c.Arguments {
		args[i] = a.ToString() // once: an object's toString must not run twice
		size += float64(strLen(args[i]))
	}
	if size > g.limit {
		g.refuse(what, size)
		return goja.Undefined()
	}
	return call(orig, this, args...)
}

// stringReplace guards replace/replaceAll with a string pattern; an object
// pattern goes to its Symbol.replace (RegExp's is guarded below).
func (g *guard) stringReplace(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	this, ok := thisString(c.This)
	pattern := arg(c.Arguments, 0)
	if !ok || isObject(pattern) {
		return call(orig, c.This, c.Arguments...)
	}
	pattern = pattern.ToString()
	if what == "String.prototype.replaceAll" {
		if m := matches(this, pattern); m*matchBytes > g.limit {
			g.refuseMatches(what, m)
			return goja.Undefined()
		}
	}
	return call(orig, this, pattern, g.countingReplacer(what, this, arg(c.Arguments, 1)))
}

func (g *guard) regexpReplace(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	s := arg(c.Arguments, 0).ToString()
	if g.tooManyMatches(what, c.This, s, false) {
		return goja.Undefined()
	}
	return call(orig, c.This, s, g.countingReplacer(what, s, arg(c.Arguments, 1)))
}

// countingReplacer turns a replacement (a function, or a string with its $
// patterns) into a function that counts what the replacements add to s and
// refuses before the result would exceed the limit.
func (g *guard) countingReplacer(what string, s, replacement goja.Value) goja.Value {
	base := float64(strLen(s))
	total := base
	add := func(v goja.Value) goja.Value {
		if g.sup.halted() {
			g.abort()
		}
		total += float64(strLen(v))
		if total > g.limit {
			g.refuse(what, total)
			g.abort()
		}
		return v
	}
	if fn, ok := goja.AssertFunction(replacement); ok {
		return g.vm.ToValue(func(c goja.FunctionCall) goja.Value {
			return add(call(fn, c.This, c.Arguments...).ToString())
		})
	}
	tmpl := replacement.ToString()
	if !strings.Contains(tmpl.String(), "$") {
		return g.vm.ToValue(func(goja.FunctionCall) goja.Value { return add(tmpl) })
	}
	return g.vm.ToValue(func(c goja.FunctionCall) goja.Value {
		return add(g.substitute(tmpl.String(), s, c.Arguments, total))
	})
}

// substitute is GetSubstitution (ECMA-262 22.1.3.19.1) for a replacer
// function's arguments: (matched, p1…pn, position, string[, groups]). It
// refuses before the expansion alone exceeds what is left of the limit.
func (g *guard) substitute(tmpl string, s goja.Value, args []goja.Value, used float64) goja.Value {
	if len(args) < 3 {
		return g.vm.ToValue(tmpl)
	}
	var groups *goja.Object
	if o, ok := args[len(args)-1].(*goja.Object); ok {
		groups = o
		args = args[:len(args)-1]
	}
	if len(args) < 3 {
		return g.vm.ToValue(tmpl)
	}
	full := g.str(s)
	sub := substitution{g: g, matched: args[0], captures: args[1 : len(args)-2], groups: groups,
		pos: int(args[len(args)-2].ToInteger()), full: full, n: full.Length(), used: used}
	for i := 0; i < len(tmpl); {
		j := strings.IndexByte(tmpl[i:], '$')
		if j < 0 || i+j+1 >= len(tmpl) {
			sub.lit(tmpl[i:])
			break
		}
		if j > 0 {
			sub.lit(tmpl[i : i+j])
		}
		i = sub.expand(tmpl, i+j)
	}
	b := sub.pieces
	if len(b) == 1 {
		return b[0]
	}
	var out goja.StringBuilder
	for _, p := range b {
		out.WriteString(g.str(p))
	}
	return out.String()
}

// substitution is one expansion of a replacement template: its pieces are
// joined once, and each is counted against the limit before it is kept.
type substitution struct {
	g        *guard
	matched  goja.Value
	captures []goja.Value
	groups   *goja.Object
	pos      int
	full     goja.String
	n        int
	used     float64
	size     float64
	pieces   []goja.Value
}

func (t *substitution) push(v goja.Value) {
	t.size += float64(strLen(v))
	if t.used+t.size > t.g.limit {
		t.g.refuse("String.prototype.replace", t.used+t.size)
		t.g.abort()
	}
	t.pieces = append(t.pieces, v)
}

func (t *substitution) lit(s string) { t.push(t.g.vm.ToValue(s)) }

// expand takes the $-pattern at tmpl[i] (tmpl[i] is '$' and not the last
// byte) and returns where the template goes on.
func (t *substitution) expand(tmpl string, i int) int {
	switch c := tmpl[i+1]; {
	case c == '$':
		t.lit("$")
	case c == '&':
		t.push(t.matched.ToString())
	case c == '`':
		t.push(t.full.Substring(0, min(max(t.pos, 0), t.n)))
	case c == '\'':
		end := min(max(t.pos, 0)+t.g.str(t.matched).Length(), t.n)
		t.push(t.full.Substring(end, t.n))
	case c >= '0' && c <= '9':
		k, width := captureRef(tmpl[i+1:], len(t.captures))
		if k == 0 {
			t.lit("$")
			return i + 1
		}
		if v := t.captures[k-1]; !isAbsent(v) {
			t.push(v.ToString())
		}
		return i + 1 + width
	case c == '<' && t.groups != nil:
		end := strings.IndexByte(tmpl[i:], '>')
		if end < 0 {
			t.lit("$<")
			return i + 2
		}
		if v := t.groups.Get(tmpl[i+2 : i+end]); !isAbsent(v) {
			t.push(v.ToString())
		}
		return i + end + 1
	default:
		t.lit("$")
		return i + 1
	}
	return i + 2
}

// captureRef reads $n or $nn after the $: the capture number (0 when it is
// not a valid reference) and the digits it took.
func captureRef(t string, m int) (k, width int) {
	d1 := int(t[0] - '0')
	if len(t) > 1 && t[1] >= '0' && t[1] <= '9' {
		if d := d1*10 + int(t[1]-'0'); d >= 1 && d <= m {
			return d, 2
		}
	}
	if d1 >= 1 && d1 <= m {
		return d1, 1
	}
	return 0, 0
}

// splitCall runs a split with its limit lowered to what the per-call limit
// allows, and refuses when the result reached it: the pieces were never
// all built.
func (g *guard) splitCall(what string, orig goja.Callable, this goja.Value, sep, limit goja.Value) goja.Value {
	most := math.Floor(g.limit / pieceBytes)
	want := float64(math.MaxUint32)
	if !goja.IsUndefined(limit) {
		want = float64(uint32(int64(limit.ToInteger())))
	}
	if want <= most {
		return call(orig, this, sep, limit)
	}
	v := call(orig, this, sep, g.vm.ToValue(int64(most)+1))
	if o, ok := v.(*goja.Object); ok && float64(toLength(o.Get("length"))) > most {
		g.refuse(what, float64(toLength(o.Get("length")))*pieceBytes)
		return goja.Undefined()
	}
	return v
}

func (g *guard) stringSplit(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	this, ok := thisString(c.This)
	sep := arg(c.Arguments, 0)
	if !ok || isObject(sep) {
		return call(orig, c.This, c.Arguments...)
	}
	return g.splitCall(what, orig, this, sep, arg(c.Arguments, 1))
}

func (g *guard) regexpSplit(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	s := arg(c.Arguments, 0).ToString()
	if g.tooManyMatches(what, c.This, s, true) {
		return goja.Undefined()
	}
	return g.splitCall(what, orig, c.This, s, arg(c.Arguments, 1))
}

func (g *guard) regexpMatch(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	s := arg(c.Arguments, 0).ToString()
	if g.tooManyMatches(what, c.This, s, false) {
		return goja.Undefined()
	}
	return call(orig, c.This, s)
}

// tooManyMatches refuses a global regular expression over a string so long
// that the records goja keeps for its matches could pass the limit: a
// pattern that matches every character (or the empty string) matches
// length+1 times, and all of them are collected in one native call before
// anything is returned. Counting the real matches would run the pattern
// and allocate as much. Splitting by a string instead of a regular
// expression is not affected.
func (g *guard) tooManyMatches(what string, rx, s goja.Value, always bool) bool {
	if !always {
		o, ok := rx.(*goja.Object)
		if !ok {
			return false
		}
		flags := o.Get("flags")
		if isAbsent(flags) || !strings.ContainsAny(flags.String(), "gy") {
			return false // one match
		}
	}
	if m := float64(strLen(s)) + 1; m*matchBytes > g.limit {
		g.refuseMatches(what, m)
		return true
	}
	return false
}

func (g *guard) refuseMatches(what string, m float64) {
	g.sup.stop(&Error{Kind: ErrResource, Op: what, Message: fmt.Sprintf(
		"%s would allocate about %.0f MiB for up to %.0f matches, over the limit of %.0f MiB for one call; cut the text into smaller parts first",
		what, m*matchBytes/(1<<20), m, g.limit/(1<<20))})
}

// matches counts the occurrences of pattern in s the way replaceAll finds
// them (an empty pattern matches between every two characters).
func matches(s, pattern goja.Value) float64 {
	p := pattern.String()
	if p == "" {
		return float64(strLen(s)) + 1
	}
	return float64(strings.Count(s.String(), p))
}

// lengthGuarded are the Array.prototype methods whose result grows with
// this.length, and the names they are refused by.
var lengthGuarded = [...][2]string{
	{"map", "Array.prototype.map"}, {"filter", "Array.prototype.filter"}, {"slice", "Array.prototype.slice"},
	{"splice", "Array.prototype.splice"}, {"sort", "Array.prototype.sort"}, {"reverse", "Array.prototype.reverse"},
	{"copyWithin", "Array.prototype.copyWithin"}, {"toReversed", "Array.prototype.toReversed"},
	{"toSorted", "Array.prototype.toSorted"}, {"toSpliced", "Array.prototype.toSpliced"}, {"with", "Array.prototype.with"},
}

// typedJoins are the %TypedArray%.prototype methods that write every element.
var typedJoins = [...][2]string{
	{"join", "%TypedArray%.prototype.join"}, {"toString", "%TypedArray%.prototype.toString"},
	{"toLocaleString", "%TypedArray%.prototype.toLocaleString"},
}

// installArrayGuards guards the Array.prototype methods whose result grows
// with this.length or with their arguments, the depth of nested joins
// (arrayProtoGuards, lazyprotos.go), and bound-function chains
// (functionProtoGuards).
//
// fnProto is Function.prototype, read off a built-in function: the global
// Function would build the constructor too.
func (g *guard) installArrayGuards(arrProto, fnProto *goja.Object) {
	g.guardProto(arrProto, 1)
	if fnProto != nil {
		g.guardProto(fnProto, 2)
	}
}

// installReflectGuards guards Reflect.apply and Reflect.construct, which
// copy an array-like into an argument list as Function.prototype.apply does.
func (g *guard) installReflectGuards(reflect *goja.Object) {
	g.wrap(reflect, "apply", "Reflect.apply", (*guard).argList2)
	g.wrap(reflect, "construct", "Reflect.construct", (*guard).argList1)
}

// installTypedJoins guards %TypedArray%.prototype, shared by every typed
// array: join writes up to 24 characters and a separator per element.
func (g *guard) installTypedJoins(typed *goja.Object) {
	for _, m := range typedJoins {
		g.wrap(typed, m[0], m[1], (*guard).typedJoin)
	}
}

func (g *guard) lengthGuard(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	if n := g.length(c.This) * elemBytes; n > g.limit {
		g.refuse(what, n)
		return goja.Undefined()
	}
	return call(orig, c.This, c.Arguments...)
}

func (g *guard) typedJoin(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	sep := 1.0
	if s := arg(c.Arguments, 0); what == "%TypedArray%.prototype.join" && !goja.IsUndefined(s) {
		sep = float64(strLen(s.ToString()))
	}
	if n := g.length(c.This) * (24 + sep); n > g.limit {
		g.refuse(what, n)
		return goja.Undefined()
	}
	return call(orig, c.This, c.Arguments...)
}

// argList1 and argList2 guard a call that copies its argument 1 or 2, an
// array-like, into an argument list (CreateListFromArrayLike): {length: 1e9}
// costs the script nothing and the list a slot per element.
func (g *guard) argList1(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.argList(orig, what, c, 1)
}

func (g *guard) argList2(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.argList(orig, what, c, 2)
}

func (g *guard) argList(orig goja.Callable, what string, c goja.FunctionCall, i int) goja.Value {
	if n := g.length(arg(c.Arguments, i)) * elemBytes; n > g.limit {
		g.refuse(what, n)
		return goja.Undefined()
	}
	return call(orig, c.This, c.Arguments...)
}

func (g *guard) spreadLength(v goja.Value) float64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 1
	}
	if s := o.GetSymbol(goja.SymIsConcatSpreadable); s != nil && !goja.IsUndefined(s) {
		if s.ToBoolean() {
			return g.length(o)
		}
		return 1
	}
	if isArr, err := g.isArray(goja.Undefined(), o); err == nil && isArr.ToBoolean() {
		return g.length(o)
	}
	return 1
}

func (g *guard) arrayConcat(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	n := g.spreadLength(c.This)
	for _, a := range c.Arguments {
		n += g.spreadLength(a)
	}
	if n*elemBytes > g.limit {
		g.refuse(what, n*elemBytes)
		return goja.Undefined()
	}
	return call(orig, c.This, c.Arguments...)
}

// flat counts the elements the result would hold, walking the arrays to
// the depth asked, and stops counting once over the limit.
func (g *guard) flat(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	depth := 1.0
	if d := arg(c.Arguments, 0); !goja.IsUndefined(d) {
		depth = d.ToFloat()
		if math.IsNaN(depth) {
			depth = 0
		}
	}
	most := g.limit / elemBytes
	count, steps := 0.0, 0.0
	var walk func(o *goja.Object, depth float64) bool
	walk = func(o *goja.Object, depth float64) bool {
		n := g.length(o)
		for i := 0.0; i < n; i++ {
			steps++
			if count > most || steps > most {
				return false
			}
			e, ok := o.Get(strconv.FormatFloat(i, 'f', -1, 64)).(*goja.Object)
			if ok && depth > 0 && isArray(e) {
				if !walk(e, depth-1) {
					return false
				}
				continue
			}
			count++
		}
		return true
	}
	if o, ok := c.This.(*goja.Object); ok && !walk(o, depth) {
		g.refuse(what, math.Max(count, steps)*elemBytes)
		return goja.Undefined()
	}
	return call(orig, c.This, c.Arguments...)
}

// flatMap counts the elements the callback's arrays add.
func (g *guard) flatMap(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	fn, ok := goja.AssertFunction(arg(c.Arguments, 0))
	if !ok {
		return call(orig, c.This, c.Arguments...)
	}
	total := 0.0
	counting := g.vm.ToValue(func(cc goja.FunctionCall) goja.Value {
		v := call(fn, cc.This, cc.Arguments...)
		total += g.spreadLength(v) * elemBytes
		if total > g.limit {
			g.refuse(what, total)
			g.abort()
		}
		return v
	})
	return call(orig, c.This, counting, arg(c.Arguments, 1))
}

// bind refuses a chain of bound functions deeper than the stack limit:
// calling one recurses in Go.
func (g *guard) bind(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	d := 0
	if o, ok := c.This.(*goja.Object); ok {
		d = g.bound[o]
	}
	if d >= g.maxDepth {
		g.refuseDeep(what)
		return goja.Undefined()
	}
	v := call(orig, c.This, c.Arguments...)
	if o, ok := v.(*goja.Object); ok {
		if g.bound == nil {
			g.bound = map[*goja.Object]int{}
		}
		g.bound[o] = d + 1
	}
	return v
}

// JSON.parse builds every value of the text in one native call, at 200 to
// 650 bytes a value (measured: "[]," is 3 bytes of text and 657 bytes of
// heap), and recurses in Go once per level of nesting. The text is scanned
// first: nesting past the stack limit, or values that would pass the
// per-call limit, are refused before parsing.
const (
	parseContainerBytes = 512 // an array or object
	parseValueBytes     = 192 // each further element or member
)

func (g *guard) jsonParse(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	text := arg(c.Arguments, 0)
	if isObject(text) {
		text = text.ToString() // once: a toString must not run twice
	}
	depth, size := scanJSON(text.String())
	if depth > g.maxDepth {
		g.refuseDeep(what)
		return goja.Undefined()
	}
	if size > g.limit {
		g.refuse(what, size)
		return goja.Undefined()
	}
	args := append([]goja.Value{text}, c.Arguments[min(1, len(c.Arguments)):]...)
	return call(orig, c.This, args...)
}

// scanJSON reads JSON text (valid or not) for its deepest nesting and an
// estimate of the heap its values take once parsed.
func scanJSON(s string) (depth int, size float64) {
	level, inString, escaped := 0, false, false
	size = float64(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			level++
			depth = max(depth, level)
			size += parseContainerBytes
		case c == ']' || c == '}':
			level--
		case c == ',':
			size += parseValueBytes
		}
	}
	return depth, size
}

// join is Array.prototype.join (or toLocaleString) counting what it writes,
// refusing before it passes the per-call limit; the original is not called.
// A cycle joins as "" the way goja, V8 and SpiderMonkey do.
func (g *guard) join(_ goja.Callable, what string, c goja.FunctionCall) goja.Value {
	locale := what == "Array.prototype.toLocaleString"
	o := c.This.ToObject(g.vm)
	for _, j := range g.joining {
		if j.SameAs(o) {
			return g.vm.ToValue("")
		}
	}
	if len(g.joining) >= g.maxDepth {
		g.refuseDeep(what)
		g.abort()
	}
	g.joining = append(g.joining, o)
	defer func() { g.joining = g.joining[:len(g.joining)-1] }()

	n := g.length(o)
	var sep goja.String
	if s := arg(c.Arguments, 0); !locale && !goja.IsUndefined(s) {
		sep = g.str(s)
	} else {
		sep = g.str(g.vm.ToValue(","))
	}
	size := math.Max(n-1, 0) * float64(sep.Length())
	if size > g.limit || n*elemBytes > 64*g.limit { // the loop alone would run for ever
		g.refuse(what, math.Max(size, n))
		return goja.Undefined()
	}
	// element i as written, counted against the limit (nil: absent)
	element := func(i float64) goja.String {
		if int(i)&1023 == 1023 && g.sup.halted() {
			g.abort()
		}
		str := g.joinElement(o, i, locale)
		if str != nil {
			if size += float64(str.Length()); size > g.limit {
				g.refuse(what, size)
				g.abort()
			}
		}
		return str
	}
	var b goja.StringBuilder
	if n > joinPieces {
		for i := 0.0; i < n; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			if str := element(i); str != nil {
				b.WriteString(str)
			}
		}
		return b.String()
	}
	// Converted first, joined once at the size they add up to: the builder
	// never doubles its way up to the limit, and one element is its own
	// result, not a copy of it (a join of [s] inside a join is that join's
	// element).
	pieces := make([]goja.String, int(n))
	for i := range pieces {
		pieces[i] = element(float64(i))
	}
	if n == 1 && pieces[0] != nil {
		return pieces[0]
	}
	b.Grow(int(size))
	for i, p := range pieces {
		if i > 0 {
			b.WriteString(sep)
		}
		if p != nil {
			b.WriteString(p)
		}
	}
	return b.String()
}

// joinPieces: a join of up to this many elements converts them all before
// it builds its result (join); a longer one builds as it goes, so it holds
// no list of its elements' strings.
const joinPieces = 4096

// joinElement is element i of o as join writes it; nil where the element is
// absent (undefined or null), which join writes as nothing.
func (g *guard) joinElement(o *goja.Object, i float64, locale bool) goja.String {
	e := o.Get(strconv.FormatFloat(i, 'f', -1, 64))
	if isAbsent(e) {
		return nil
	}
	if !locale {
		return g.str(e)
	}
	f, ok := goja.AssertFunction(e.ToObject(g.vm).Get("toLocaleString"))
	if !ok {
		panic(g.vm.NewTypeError("toLocaleString is not a function"))
	}
	return g.str(call(f, e))
}

// str is ToString(v) as a goja.String: goja's ToString hands numbers back
// as numbers.
func (g *guard) str(v goja.Value) goja.String {
	if s, ok := v.ToString().(goja.String); ok {
		return s
	}
	if s, ok := g.vm.ToValue(v.String()).(goja.String); ok {
		return s
	}
	return g.vm.ToValue("").(goja.String)
}

// iterStepBytes is what one step of an array or string iterator costs when
// a native consumer collects the steps ([...it], Array.from, new Set,
// f(...it)): a slot and the value live, and some 500 bytes of result
// objects that are garbage but count in the heap until swept. At 128, the
// default limits allow half a million steps per iterator, for-of included.
const iterStepBytes = elemBytes

// maxOpenIterators bounds the iterators counted at once.
const maxOpenIterators = 10000

// installIteratorGuards counts the steps of each array, typed-array and
// string iterator. The steps need not exist: a sparse array of length 1e9
// or a 60 MB string yields them from nothing, and a spread or Array.from
// collects them all in one native loop that no interrupt reaches.
//
// The string iterators are guarded when goja builds
// String.prototype[Symbol.iterator] (lazyprotos.go), or now.
func (g *guard) installIteratorGuards(str, arrProto *goja.Object) {
	// The iterator prototypes are reached through one iterator each: an
	// array's from Array.prototype.values (the same function as its
	// Symbol.iterator, without building the prototype's other symbols),
	// over Array.prototype itself, an array. An arguments object's
	// Symbol.iterator is that function too, reached without
	// Array.prototype: the array iterators are guarded now.
	g.iteratorNext(arrProto.Get("values"), arrProto, "an array iterator")
	if !g.lazyStringIterator(str) {
		g.iteratorNext(str.GetSymbol(goja.SymIterator), g.vm.ToValue(""), "a string iterator")
	}
}

// iteratorNext guards next of the prototype of the iterator that f makes
// of of, and reports whether it did.
func (g *guard) iteratorNext(fv, of goja.Value, what string) bool {
	f, ok := goja.AssertFunction(fv)
	if !ok {
		return false
	}
	iter, err := f(of)
	if err != nil {
		return false
	}
	if o, ok := iter.(*goja.Object); ok && o.Prototype() != nil {
		n := len(g.wrapped)
		g.wrap(o.Prototype(), "next", what, (*guard).iteratorStep)
		return len(g.wrapped) > n
	}
	return false
}

func (g *guard) iteratorStep(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	self, ok := c.This.(*goja.Object)
	if !ok {
		return call(orig, c.This, c.Arguments...)
	}
	n := g.steps[self] + 1
	if n*iterStepBytes > g.limit {
		g.sup.stop(&Error{Kind: ErrResource, Op: what, Message: fmt.Sprintf(
			"%s went past %.0f steps, which collected would take over the limit of %.0f MiB for one call",
			what, n-1, g.limit/(1<<20))})
		g.abort()
	}
	v := call(orig, c.This, c.Arguments...)
	switch r, ok := v.(*goja.Object); {
	case ok && r.Get("done").ToBoolean():
		delete(g.steps, self)
	case len(g.steps) >= maxOpenIterators:
		// Loops that break out leave their iterators here; forget
		// them rather than keep them all. A native consumer runs
		// no script between steps, so it cannot use this to
		// reset its own count, and a script loop is interruptible.
		clear(g.steps)
		fallthrough
	default:
		if g.steps == nil {
			g.steps = map[*goja.Object]float64{}
		}
		g.steps[self] = n
	}
	return v
}
