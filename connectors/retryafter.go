package connectors

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// MaxRetryAfter is the longest wait a Retry-After gets. The header is the
// server's word: ten years (or seconds past what a Duration holds, which
// wrapped round to any wait at all, negative included) would park a
// mutation for good, a retryable call given up on in silence. A day is
// longer than any rate limit keeps, a daily quota's included.
const MaxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads the value of a Retry-After header: whole seconds, or
// an HTTP date, at most MaxRetryAfter. Anything else, a negative delay or a
// date already past is 0, no hint.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case secs < 0:
			return 0
		case secs > int64(MaxRetryAfter/time.Second):
			return MaxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, MaxRetryAfter)
		}
	}
	return 0
}
