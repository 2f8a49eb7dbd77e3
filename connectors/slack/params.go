package slack

import (
	"math"
	"strconv"

	"keep/connectors"
)

// stringParam reads a string param; a missing one is "" unless required.
func stringParam(params map[string]any, name string, required bool) (string, error) {
	v, ok := params[name]
	if !ok || v == nil {
		if required {
			return "", connectors.Errorf(connectors.Logic, "%s is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", connectors.Errorf(connectors.Logic, "%s must be a string, not %T", name, v)
	}
	if required && s == "" {
		return "", connectors.Errorf(connectors.Logic, "%s is required", name)
	}
	return s, nil
}

// tsParam reads a Slack timestamp. Strings are best ("1712345678.000100");
// a number is accepted, as scripts may compute one, though a float64 can't
// hold every microsecond.
func tsParam(params map[string]any, name string) (string, error) {
	switch v := params[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	}
	return "", connectors.Errorf(connectors.Logic, "%s must be a Slack timestamp string, not %T", name, params[name])
}

// intParam reads a whole number in [lo, hi], or def when missing.
func intParam(params map[string]any, name string, def, lo, hi int64) (int64, error) {
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
			return 0, connectors.Errorf(connectors.Logic, "%s must be a whole number, not %v", name, v)
		}
		n = int64(v)
	default:
		return 0, connectors.Errorf(connectors.Logic, "%s must be a number, not %T", name, v)
	}
	if n < lo || n > hi {
		return 0, connectors.Errorf(connectors.Logic, "%s must be between %d and %d, not %d", name, lo, hi, n)
	}
	return n, nil
}

func boolParam(params map[string]any, name string) (bool, error) {
	switch v := params[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, connectors.Errorf(connectors.Logic, "%s must be true or false, not %T", name, params[name])
}
