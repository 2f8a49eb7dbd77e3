package connectors

import (
	"net/http"
	"strconv"
	"time"
)

// ParseRetryAfter reads the value of a Retry-After header: whole seconds, or
// an HTTP date. Anything else, a negative delay or a date already past is 0,
// no hint.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
