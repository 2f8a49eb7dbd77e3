package sandbox

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// handlerDecl is what Run needs to know of a handler's declaration.
type handlerDecl struct {
	consumer  bool
	publishes []string
	subscribe []string
	// at is where each phase's function is written (line, col), for an
	// error that carries no position of its own.
	at map[string][2]int
}

// workflowName is the one rule for a workflow's name wherever it comes
// from (the file, `deploy --name`, a proposal, `keep edit`): it becomes a
// file name (NAME.js) and a word on every screen, so it starts with a
// letter or digit and holds nothing a path or a terminal reads specially.
var workflowName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// CheckWorkflowName refuses a name the workflow file itself could not carry.
func CheckWorkflowName(name string) error {
	if !workflowName.MatchString(name) {
		return fmt.Errorf("workflow name %q must start with a lowercase letter or digit and hold only lowercase letters, digits, '-', '_' and '.' (at most 100)", name)
	}
	return nil
}

// builtinOps are the ctx operations that are not connectors.
var builtinOps = map[string]bool{"registerInput": true, "publish": true, "peek": true, "getByIds": true}

// validator checks a declaration (DESIGN.md §3), collecting every problem.
type validator struct {
	loc   locator
	opts  LoadOptions
	vm    *goja.Runtime
	diags []Diagnostic
	// unnamedOK lets a use of ctx the analysis cannot name pass: tests
	// only (loadUnnamed), to show what the run's own guards do with it.
	unnamedOK bool
}

// maxDiagnostics and maxDeclared bound what validation produces and reads:
// the declaration is built by code, and a generated one can be as large as
// the load-time heap limit allows, each name searched for in the source.
const (
	maxDiagnostics = 100
	maxDeclared    = 1000 // topics, producers or consumers of one workflow
)

func (v *validator) add(off int, format string, args ...any) {
	switch {
	case len(v.diags) < maxDiagnostics:
		v.diags = append(v.diags, v.loc.diag(off, format, args...))
	case len(v.diags) == maxDiagnostics:
		v.diags = append(v.diags, Diagnostic{File: v.loc.file, Message: fmt.Sprintf("more problems not shown (the first %d are)", maxDiagnostics)})
	}
}

// keys are obj's own enumerable keys, refused past maxDeclared.
func (v *validator) keys(obj *goja.Object, field string, at int) ([]string, bool) {
	keys := obj.Keys()
	if len(keys) > maxDeclared {
		v.add(at, "%s declares %d entries, over the limit of %d", field, len(keys), maxDeclared)
		return nil, false
	}
	return keys, true
}

func (v *validator) workflow(decl *goja.Object) (Workflow, map[string]handlerDecl) {
	var wf Workflow
	handlers := map[string]handlerDecl{}
	top := or(v.loc.first(0, "Keep.workflow"), v.loc.first(0, "export default"))
	if decl == nil {
		v.add(top, "the file has no `export default Keep.workflow({...})`")
		return wf, handlers
	}

	switch name := decl.Get("name"); {
	case isAbsent(name):
		v.add(top, "the workflow has no name")
	case !isString(name) || name.String() == "":
		v.add(or(v.loc.key(top, "name"), top), "the workflow name must be a non-empty string")
	case !workflowName.MatchString(name.String()):
		v.add(or(v.loc.literal(top, name.String()), top),
			"workflow name %q must start with a lowercase letter or digit and hold only lowercase letters, digits, '-', '_' and '.' (at most 100)", name.String())
	default:
		wf.Name = name.String()
	}

	var topics map[string]bool
	topics, wf.Topics = v.topics(decl, top)

	publisher := map[string]string{} // topic → handler
	reader := map[string]string{}    // topic → consumer
	seen := map[string]string{}      // handler name → "producer" | "consumer"
	claim := func(section, name string, at int) bool { return v.claim(seen, section, name, at) }
	checkTopics := func(list []string, from int, field, handler string, owners map[string]string, role string) {
		v.checkTopics(topics, list, from, field, handler, owners, role)
	}

	producersAt := or(v.loc.key(top, "producers"), top)
	for _, p := range v.section(decl, "producers", producersAt) {
		at := or(v.loc.key(producersAt, p.name), producersAt)
		if !claim("producer", p.name, at) {
			continue
		}
		obj, ok := p.value.(*goja.Object)
		if !ok || isFunction(p.value) || isArray(p.value) {
			v.add(at, "producer %q must be an object { publishes, schedule, handler }", p.name)
			continue
		}
		prod := Producer{Name: p.name}
		prod.Publishes = v.topicList(obj, "publishes", "producer", p.name, at, true)
		checkTopics(prod.Publishes, at, "publishes", p.name, publisher, "publishing handler")
		prod.Schedule = v.schedule(obj.Get("schedule"), p.name, at)
		v.function(obj, "handler", "producer", p.name, at)
		wf.Producers = append(wf.Producers, prod)
		handlers[p.name] = handlerDecl{publishes: prod.Publishes, at: v.positions(at, "handler")}
	}

	consumersAt := or(v.loc.key(top, "consumers"), top)
	for _, c := range v.section(decl, "consumers", consumersAt) {
		at := or(v.loc.key(consumersAt, c.name), consumersAt)
		if !claim("consumer", c.name, at) {
			continue
		}
		obj, ok := c.value.(*goja.Object)
		if !ok || isFunction(c.value) || isArray(c.value) {
			v.add(at, "consumer %q must be Keep.consumer({ subscribe, publishes, prepare, mutate, next })", c.name)
			continue
		}
		cons := Consumer{Name: c.name}
		cons.Subscribe = v.topicList(obj, "subscribe", "consumer", c.name, at, true)
		checkTopics(cons.Subscribe, at, "subscribe", c.name, reader, "consumer")
		cons.Publishes = v.topicList(obj, "publishes", "consumer", c.name, at, false)
		checkTopics(cons.Publishes, at, "publishes", c.name, publisher, "publishing handler")
		cons.Concurrency = v.concurrency(obj, c.name, at)
		for _, phase := range []string{"prepare", "mutate", "next"} {
			v.function(obj, phase, "consumer", c.name, at)
		}
		cons.EmptyNext = emptyFunction(v.vm, obj.Get("next"))
		wf.Consumers = append(wf.Consumers, cons)
		handlers[c.name] = handlerDecl{consumer: true, publishes: cons.Publishes, subscribe: cons.Subscribe, at: v.positions(at, "prepare", "mutate", "next")}
	}
	return wf, handlers
}

// topics reads the workflow's topics: the set, and the names in order.
func (v *validator) topics(decl *goja.Object, top int) (map[string]bool, []string) {
	topics := map[string]bool{}
	var names []string
	topicsAt := or(v.loc.key(top, "topics"), top)
	switch t := decl.Get("topics"); {
	case isAbsent(t):
		v.add(top, `the workflow declares no topics (topics: { "name": {} })`)
	case isObject(t) && !isArray(t):
		keys, _ := v.keys(t.(*goja.Object), "topics", topicsAt)
		for _, k := range keys {
			if k == "" {
				v.add(topicsAt, "a topic name must not be empty")
				continue
			}
			if !visibleName(k) {
				v.add(or(v.loc.literal(topicsAt, k), topicsAt), "topic name %+q %s", k, visibleRule)
				continue
			}
			topics[k] = true
			names = append(names, k)
		}
	default:
		v.add(topicsAt, `topics must be an object mapping each topic name to {} (topics: { "name": {} })`)
	}
	return topics, names
}

// visibleRule is what visibleName asks of a handler's or a topic's name.
const visibleRule = "must be visible text on one line: no control characters (a newline, ESC), no invisible ones (a bidi override, a zero-width space)"

// visibleName says whether a handler's or a topic's name shows as what it
// is. The names are printed wherever keep shows a run, an event or a
// workflow (the TUI, every listing of the CLI, traces, keep.log), one to a
// cell: a newline in one would start a row keep did not write, an
// invisible character would make it read as another. Refused here, where
// the names are declared, no screen has to be careful with them. The
// rule is Unicode's: a printable rune (letters, marks, numbers,
// punctuation, symbols and the ASCII space) that is not default-ignorable.
func visibleName(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) ||
			unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
			return false
		}
	}
	return true
}

// claim takes a handler name for section; seen holds the names taken.
func (v *validator) claim(seen map[string]string, section, name string, at int) bool {
	if !visibleName(name) {
		v.add(at, "%s name %+q %s", section, name, visibleRule)
		return false
	}
	if other, dup := seen[name]; dup {
		v.add(at, "handler name %q is used by both a %s and a %s", name, other, section)
		return false
	}
	seen[name] = section
	return true
}

// checkTopics checks a handler's list of topics (field) against the
// declared topics, and that each has at most one owner in role.
func (v *validator) checkTopics(topics map[string]bool, list []string, from int, field, handler string, owners map[string]string, role string) {
	for _, t := range list {
		at := or(v.loc.literal(from, t), from)
		if !topics[t] {
			v.add(at, "%s of %q names topic %q, which is not declared in topics", field, handler, t)
			continue
		}
		if other, taken := owners[t]; taken && other != handler {
			v.add(at, "topic %q already has %s %q; a topic has at most one %s", t, role, other, role)
			continue
		}
		owners[t] = handler
	}
}

// positions finds where each of the keys is written after from.
func (v *validator) positions(from int, keys ...string) map[string][2]int {
	at := map[string][2]int{}
	for _, k := range keys {
		if off := v.loc.key(from, k); off >= 0 {
			line, col := v.loc.pos(off)
			at[k] = [2]int{line, col}
		}
	}
	return at
}

type entry struct {
	name  string
	value goja.Value
}

// section returns the entries of producers or consumers in declaration
// order; absent is empty.
func (v *validator) section(decl *goja.Object, field string, at int) []entry {
	val := decl.Get(field)
	if isAbsent(val) {
		return nil
	}
	obj, ok := val.(*goja.Object)
	if !ok || isArray(val) || isFunction(val) {
		v.add(at, "%s must be an object mapping each name to its declaration", field)
		return nil
	}
	keys, ok := v.keys(obj, field, at)
	if !ok {
		return nil
	}
	var out []entry
	for _, k := range keys {
		out = append(out, entry{k, obj.Get(k)})
	}
	return out
}

// topicList reads publishes or subscribe: an array of topic names.
func (v *validator) topicList(obj *goja.Object, field, kind, name string, at int, required bool) []string {
	val := obj.Get(field)
	fieldAt := or(v.loc.key(at, field), at)
	if isAbsent(val) {
		if required {
			v.add(at, "%s %q has no %s; it must name at least one topic", kind, name, field)
		}
		return nil
	}
	list, ok := stringArray(val)
	if !ok {
		v.add(fieldAt, "%s of %s %q must be an array of topic names", field, kind, name)
		return nil
	}
	if required && len(list) == 0 {
		v.add(fieldAt, "%s of %s %q is empty; it must name at least one topic", field, kind, name)
	}
	return list
}

func (v *validator) function(obj *goja.Object, field, kind, name string, at int) {
	val := obj.Get(field)
	switch {
	case isAbsent(val):
		v.add(at, "%s %q has no %s function", kind, name, field)
	case !isFunction(val):
		v.add(or(v.loc.key(at, field), at), "%s of %s %q must be a function", field, kind, name)
	}
}

// concurrency reads a consumer's concurrency: absent is 1, else a whole
// number from 1 to MaxConcurrency.
func (v *validator) concurrency(obj *goja.Object, name string, at int) int {
	val := obj.Get("concurrency")
	if isAbsent(val) {
		return 1
	}
	fieldAt := or(v.loc.key(at, "concurrency"), at)
	if !isNumber(val) {
		v.add(fieldAt, "concurrency of consumer %q must be a whole number from 1 to %d", name, MaxConcurrency)
		return 1
	}
	f := val.ToFloat()
	if f != math.Trunc(f) || f < 1 || f > MaxConcurrency {
		v.add(fieldAt, "concurrency of consumer %q is %s; it must be a whole number from 1 to %d", name, val.String(), MaxConcurrency)
		return 1
	}
	return int(f)
}

// schedule checks { interval: "5m" } or { cron: "0 9 * * *" }, and a
// watched folder beside or instead of them ({ watch: "inbox" }).
func (v *validator) schedule(val goja.Value, name string, at int) Schedule {
	const forms = `{ interval: "5m" }, { cron: "0 9 * * *" } or { watch: "inbox" }`
	fieldAt := or(v.loc.key(at, "schedule"), at)
	obj, ok := val.(*goja.Object)
	if isAbsent(val) {
		v.add(at, "producer %q has no schedule (%s)", name, forms)
		return Schedule{}
	}
	if !ok || isArray(val) || isFunction(val) {
		v.add(fieldAt, "schedule of producer %q must be %s", name, forms)
		return Schedule{}
	}
	var s Schedule
	if w := obj.Get("watch"); !isAbsent(w) {
		text := w.String()
		textAt := or(v.loc.literal(fieldAt, text), fieldAt)
		if !isString(w) || strings.TrimSpace(text) == "" {
			v.add(textAt, `watch of producer %q must be a folder under the files roots, like "inbox"`, name)
		}
		s.Watch = text // the folder is checked in the host (watchFolders)
	}
	iv, cr := obj.Get("interval"), obj.Get("cron")
	switch {
	case !isAbsent(iv) && !isAbsent(cr):
		v.add(fieldAt, "schedule of producer %q has both interval and cron; give exactly one", name)
		return Schedule{}
	case !isAbsent(iv):
		text := iv.String()
		textAt := or(v.loc.literal(fieldAt, text), fieldAt)
		if !isString(iv) {
			v.add(textAt, `interval of producer %q must be a string like "30s", "5m", "1h" or "1d"`, name)
			return Schedule{}
		}
		d, err := ParseInterval(text)
		if err != nil {
			v.add(textAt, "schedule of producer %q: %v", name, err)
			return Schedule{}
		}
		if d < v.opts.MinInterval {
			v.add(textAt, "schedule of producer %q: interval %s is shorter than the shortest allowed, %s", name, text, v.opts.MinInterval)
		}
		s.Interval, s.Text = d, text
	case !isAbsent(cr):
		text := cr.String()
		textAt := or(v.loc.literal(fieldAt, text), fieldAt)
		if !isString(cr) {
			v.add(textAt, "cron of producer %q must be a string of 5 fields", name)
			return Schedule{}
		}
		if _, err := ParseCron(text); err != nil {
			v.add(textAt, "schedule of producer %q: %v", name, err)
			return Schedule{}
		}
		s.Cron, s.Text = text, text
	case s.Watch == "":
		v.add(fieldAt, "schedule of producer %q needs interval or cron, or watch (%s)", name, forms)
		return Schedule{}
	}
	s.Text = s.words()
	return s
}

func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func isAbsent(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// isString, isNumber: primitives only, by type: exporting an object would
// copy it whole (a sparse array of length 1e9 exports as 16 GB), and
// exporting a primitive allocates. A symbol counts as a string here, as it
// did when this asked whether v exported as one.
// isString: a primitive string; a symbol is not one, though goja renders
// it as text (Symbol("a") would otherwise pass for the id "a").
func isString(v goja.Value) bool {
	return !isSymbol(v) && goja.IsString(v)
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

func isArray(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == "Array"
}

func isFunction(v goja.Value) bool {
	_, ok := goja.AssertFunction(v)
	return ok
}

// maxStringList bounds the arrays stringArray reads: a sparse array's
// length costs the script nothing, its export a slot per element.
const maxStringList = 10000

// stringArray reads an array whose every element is a string.
func stringArray(v goja.Value) ([]string, bool) {
	if !isArray(v) || toLength(v.(*goja.Object).Get("length")) > maxStringList {
		return nil, false
	}
	items, ok := v.Export().([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func isSymbol(v goja.Value) bool {
	_, ok := v.(*goja.Symbol)
	return ok
}
