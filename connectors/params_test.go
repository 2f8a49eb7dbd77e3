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
