package connectors

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Parameter readers shared by the connectors. Each reads one entry of a
// call's JSON-shaped parameters and fails with a Logic *Error naming it, so
// a script that passes the wrong shape learns which parameter and why.

// String reads a string parameter; a missing (or null) one is "" unless
// required, and a required one must not be empty.
func String(params map[string]any, name string, required bool) (string, error) {
	v, ok := params[name]
	if !ok || v == nil {
		if required {
			return "", Errorf(Logic, "%s is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", Errorf(Logic, "%s must be a string, not %T", name, v)
	}
	if required && s == "" {
		return "", Errorf(Logic, "%s is required", name)
	}
	return s, nil
}

// Strings reads an optional list of strings; a missing one is nil.
func Strings(params map[string]any, name string) ([]string, error) {
	v, ok := params[name]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := List(v)
	if !ok {
		return nil, Errorf(Logic, "%s must be a list, not %T", name, v)
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, Errorf(Logic, "%s[%d] must be a string, not %T", name, i, x)
		}
		out[i] = s
	}
	return out, nil
}

// Int reads a whole number in [lo, hi], or def when missing. Numbers arrive
// as float64 from JSON and as int64 or int from the host.
func Int(params map[string]any, name string, def, lo, hi int64) (int64, error) {
	var n int64
	switch v := params[name].(type) {
	case nil:
		return def, nil
	case int64:
		n = v
	case int:
		n = int64(v)
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return 0, Errorf(Logic, "%s must be a whole number, not %v", name, v)
		}
		n = int64(v)
	default:
		return 0, Errorf(Logic, "%s must be a number, not %T", name, v)
	}
	if n < lo || n > hi {
		return 0, Errorf(Logic, "%s must be between %d and %d, not %d", name, lo, hi, n)
	}
	return n, nil
}

// Bool reads an optional boolean; a missing one is false.
func Bool(params map[string]any, name string) (bool, error) {
	switch v := params[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, Errorf(Logic, "%s must be true or false, not %T", name, params[name])
}

// List accepts the list shapes that reach a connector: []any from JSON and
// scripts, []string from Go callers.
func List(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// Undeclared refuses params holding a field m does not declare, naming
// connector.method, the fields and the ones it takes. The host checks every
// call with it before the connector sees it, so that no connector has to:
// a connector reads the fields it knows, and a misspelt one would be
// dropped silently, the call doing something else than the script asked.
// The same holds inside an argument whose Fields are declared
// (reconcile: { url }): a misspelt field there would leave the connector
// without what it reads, the call made and its outcome never checked.
func Undeclared(connector string, m Method, params map[string]any) error {
	op := connector + "." + m.Name
	if !m.OpenArgs {
		// sandbox/static.go says the same of a literal argument at validate
		if extra := undeclared(m.Args, params, ""); len(extra) > 0 {
			for _, name := range extra {
				if why, ok := m.Refuses[name]; ok {
					return Errorf(Logic, "%s %s", op, why)
				}
			}
			return Errorf(Logic, "%s takes no %s (it takes%s)", op, strings.Join(extra, ", "), takes(m.Args))
		}
	}
	// an open method's own fields are still keep's to check
	return undeclaredFields(op, m.Args, params, "")
}

// undeclaredFields is Undeclared inside each argument of args that declares
// its Fields, path naming where args are ("reconcile.").
func undeclaredFields(op string, args []Arg, params map[string]any, path string) error {
	for _, a := range args {
		v := params[a.Name]
		if len(a.Fields) == 0 || v == nil {
			continue
		}
		name := path + a.Name
		obj, ok := v.(map[string]any)
		if !ok {
			return Errorf(Logic, "%s %s must be an object %s, not %s", op, name, a.TS(), kindOf(v))
		}
		if extra := undeclared(a.Fields, obj, name+"."); len(extra) > 0 {
			return Errorf(Logic, "%s takes no %s (%s takes%s)", op, strings.Join(extra, ", "), name, takes(a.Fields))
		}
		var missing []string
		for _, f := range a.Fields {
			if f.Required && obj[f.Name] == nil {
				missing = append(missing, f.Name)
			}
		}
		if len(missing) > 0 {
			return Errorf(Logic, "%s %s needs %s", op, name, strings.Join(missing, ", "))
		}
		if err := undeclaredFields(op, a.Fields, obj, name+"."); err != nil {
			return err
		}
	}
	return nil
}

// undeclared lists, sorted and prefixed by path, the keys of obj that args
// do not declare.
func undeclared(args []Arg, obj map[string]any, path string) []string {
	var extra []string
	for name := range obj {
		if !slices.ContainsFunc(args, func(a Arg) bool { return a.Name == name }) {
			extra = append(extra, path+name)
		}
	}
	sort.Strings(extra)
	return extra
}

// takes is what follows "it takes" or "reconcile takes" in a refusal.
func takes(args []Arg) string {
	if len(args) == 0 {
		return " nothing"
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
	}
	return ": " + strings.Join(names, ", ")
}

// kindOf names a JSON-shaped value's kind as a script knows it.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, float32, int, int64, int32:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []string:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
