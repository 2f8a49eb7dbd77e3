package slack

import (
	"strconv"

	"keep/connectors"
)

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
