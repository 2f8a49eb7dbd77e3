package sheets

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"keep/connectors"
)

// cellsParam reads an optional list of cell values, such as values.
func cellsParam(params map[string]any, name string) ([]string, bool, error) {
	v, ok := params[name]
	if !ok || v == nil {
		return nil, false, nil
	}
	list, ok := connectors.List(v)
	if !ok {
		return nil, false, connectors.Errorf(connectors.Logic, "%s must be a list, not %T", name, v)
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, err := cell(x)
		if err != nil {
			return nil, false, connectors.Errorf(connectors.Logic, "%s[%d]: %w", name, i, err)
		}
		out[i] = s
	}
	return out, true, nil
}

// cellMapParam reads an optional {column: value} object, such as row or set.
func cellMapParam(params map[string]any, name string) (map[string]string, bool, error) {
	v, ok := params[name]
	if !ok || v == nil {
		return nil, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, connectors.Errorf(connectors.Logic, "%s must be an object of column: value, not %T", name, v)
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, err := cell(x)
		if err != nil {
			return nil, false, connectors.Errorf(connectors.Logic, "%s.%s: %w", name, k, err)
		}
		out[k] = s
	}
	return out, true, nil
}

// cell renders a JSON-shaped scalar as the text of a CSV cell. Numbers are
// written the short way (12, not 12.000000) so that a value read back and
// written again doesn't change.
func cell(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", errNotCell(v)
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case json.Number:
		return x.String(), nil
	}
	return "", errNotCell(v)
}

// typed is what a Google sheet gets for a script's cell value v, which
// cell has accepted: a number or a boolean as itself, since RAW stores a
// JSON string as text (a total SUM leaves out, a checkbox never ticked);
// ok is false for a value that goes as its text.
func typed(v any) (any, bool) {
	switch v.(type) {
	case bool, float64, int64, int, json.Number:
		return v, true
	}
	return nil, false
}

// errNotCell is wrapped by the caller, which names the param and classifies.
func errNotCell(v any) error {
	return fmt.Errorf("a cell holds a string, a finite number, a boolean or null, not %T %v", v, v)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
