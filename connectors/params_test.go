package connectors_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"keep/connectors"
)

// TestParams runs each shared reader over the parameter "x": a case wants
// either a value or a Logic error whose message contains wantErr.
func TestParams(t *testing.T) {
	type reader func(p map[string]any) (any, error)
	str := func(required bool) reader {
		return func(p map[string]any) (any, error) { return connectors.String(p, "x", required) }
	}
	list := func(p map[string]any) (any, error) { return connectors.Strings(p, "x") }
	num := func(p map[string]any) (any, error) { return connectors.Int(p, "x", 100, 1, 1000) }
	flag := func(p map[string]any) (any, error) { return connectors.Bool(p, "x") }
	x := func(v any) map[string]any { return map[string]any{"x": v} }
	none := map[string]any{}

	for _, tc := range []struct {
		name    string
		read    reader
		params  map[string]any
		want    any
		wantErr string
	}{
		{"String: present", str(false), x("a"), "a", ""},
		{"String: present and required", str(true), x("a"), "a", ""},
		{"String: missing is empty", str(false), none, "", ""},
		{"String: null is empty", str(false), x(nil), "", ""},
		{"String: empty is allowed when optional", str(false), x(""), "", ""},
		{"String: missing but required", str(true), none, nil, "x is required"},
		{"String: null but required", str(true), x(nil), nil, "x is required"},
		{"String: empty but required", str(true), x(""), nil, "x is required"},
		{"String: not a string", str(false), x(3.0), nil, "x must be a string, not float64"},

		{"Strings: missing is nil", list, none, []string(nil), ""},
		{"Strings: null is nil", list, x(nil), []string(nil), ""},
		{"Strings: a JSON list", list, x([]any{"a", "b"}), []string{"a", "b"}, ""},
		{"Strings: a Go list", list, x([]string{"a"}), []string{"a"}, ""},
		{"Strings: an empty list", list, x([]any{}), []string{}, ""},
		{"Strings: not a list", list, x("a,b"), nil, "x must be a list, not string"},
		{"Strings: an element not a string", list, x([]any{"a", 1.0}), nil, "x[1] must be a string, not float64"},

		{"Int: missing is the default", num, none, int64(100), ""},
		{"Int: null is the default", num, x(nil), int64(100), ""},
		{"Int: a JSON number", num, x(5.0), int64(5), ""},
		{"Int: an int64", num, x(int64(7)), int64(7), ""},
		{"Int: an int", num, x(9), int64(9), ""},
		{"Int: the bounds are inclusive", num, x(1000.0), int64(1000), ""},
		{"Int: a fraction", num, x(1.5), nil, "x must be a whole number, not 1.5"},
		{"Int: infinity", num, x(math.Inf(1)), nil, "x must be a whole number"},
		{"Int: not a number", num, x("5"), nil, "x must be a number, not string"},
		{"Int: below the range", num, x(0.0), nil, "x must be between 1 and 1000, not 0"},
		{"Int: above the range", num, x(int64(1001)), nil, "x must be between 1 and 1000, not 1001"},

		{"Bool: missing is false", flag, none, false, ""},
		{"Bool: null is false", flag, x(nil), false, ""},
		{"Bool: true", flag, x(true), true, ""},
		{"Bool: false", flag, x(false), false, ""},
		{"Bool: not a boolean", flag, x("yes"), nil, "x must be true or false, not string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read(tc.params)
			if tc.wantErr != "" {
				if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a logic error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      any
		want   []any
		wantOK bool
	}{
		{"a JSON list", []any{"a", 1.0}, []any{"a", 1.0}, true},
		{"a Go list of strings", []string{"a", "b"}, []any{"a", "b"}, true},
		{"a string", "a", nil, false},
		{"an object", map[string]any{}, nil, false},
		{"nil", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := connectors.List(tc.v)
			if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("List(%#v) = %#v, %v; want %#v, %v", tc.v, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestUndeclared runs the host's refusal of undeclared fields over a method
// shaped like http.request: a case wants it to let the call through ("") or
// to refuse it with a Logic error whose message contains wantErr. Inside an
// argument whose Fields are declared, a misspelt field would leave the
// connector without what it reads (reconcile.url) and the call unchecked.
func TestUndeclared(t *testing.T) {
	t.Parallel()
	m := connectors.Method{Name: "request", Args: []connectors.Arg{
		{Name: "url", Type: "string", Required: true},
		{Name: "json", Type: "any"},
		{Name: "headers", Type: "Record<string, string>"},
		{Name: "reconcile", Fields: []connectors.Arg{
			{Name: "url", Type: "string", Required: true},
			{Name: "by", Fields: []connectors.Arg{{Name: "field", Type: "string", Required: true}}},
		}},
	}}
	open := m
	open.OpenArgs = true
	obj := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}

	for _, tc := range []struct {
		name    string
		m       connectors.Method
		params  map[string]any
		wantErr string
	}{
		{"declared fields", m, obj("url", "u", "reconcile", obj("url", "r")), ""},
		{"no reconcile", m, obj("url", "u"), ""},
		{"a null reconcile is none", m, obj("url", "u", "reconcile", nil), ""},
		{"an open argument takes any field", m, obj("url", "u", "json", obj("anything", 1.0), "headers", obj("X-A", "b")), ""},
		{"a nested object declared in full", m, obj("reconcile", obj("url", "r", "by", obj("field", "id"))), ""},

		{"an undeclared field", m, obj("url", "u", "jsn", 1.0),
			"http.request takes no jsn (it takes: url, json, headers, reconcile)"},
		{"an undeclared nested field", m, obj("url", "u", "reconcile", obj("urll", "r")),
			"http.request takes no reconcile.urll (reconcile takes: url, by)"},
		{"undeclared nested fields, named in order", m, obj("reconcile", obj("url", "r", "z", 1.0, "a", 2.0)),
			"http.request takes no reconcile.a, reconcile.z (reconcile takes: url, by)"},
		{"a required nested field missing", m, obj("url", "u", "reconcile", obj()),
			"http.request reconcile needs url"},
		{"a required nested field null", m, obj("url", "u", "reconcile", obj("url", nil)),
			"http.request reconcile needs url"},
		{"a string where an object is declared", m, obj("url", "u", "reconcile", "https://x/items/1"),
			"http.request reconcile must be an object { url: string, by?: { field: string } }, not a string"},
		{"a list where an object is declared", m, obj("reconcile", []any{"r"}),
			"http.request reconcile must be an object { url: string, by?: { field: string } }, not a list"},
		{"two levels down", m, obj("reconcile", obj("url", "r", "by", obj("feild", "id"))),
			"http.request takes no reconcile.by.feild (reconcile.by takes: field)"},
		{"two levels down, missing", m, obj("reconcile", obj("url", "r", "by", obj())),
			"http.request reconcile.by needs field"},
		{"an open method still checks its declared fields", open, obj("more", 1.0, "reconcile", obj("urll", "r")),
			"http.request takes no reconcile.urll (reconcile takes: url, by)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := connectors.Undeclared("http", tc.m, tc.params)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want a logic error %q", err, tc.wantErr)
			}
		})
	}
}

// An object argument's type is the one its fields make, so what keep.d.ts
// prints and what Undeclared checks cannot disagree; a written Type stands.
func TestArgTS(t *testing.T) {
	t.Parallel()
	a := connectors.Arg{Name: "reconcile", Fields: []connectors.Arg{
		{Name: "tool", Type: "string", Required: true},
		{Name: "args", Type: "Record<string, any>"},
		{Name: "match", Type: "any"},
	}}
	if got, want := a.TS(), "{ tool: string, args?: Record<string, any>, match?: any }"; got != want {
		t.Errorf("TS() = %q, want %q", got, want)
	}
	if got := (connectors.Arg{Name: "url", Type: "string"}).TS(); got != "string" {
		t.Errorf("TS() of a typed argument = %q, want string", got)
	}
}
