package connectors_test

import (
	"net/http"
	"testing"
	"time"

	"keep/connectors"
)

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    string
		want time.Duration
	}{
		{"empty", "", 0},
		{"seconds", "7", 7 * time.Second},
		{"zero seconds", "0", 0},
		{"negative seconds", "-3", 0},
		{"not a number or a date", "soon", 0},
		{"spaces are not trimmed", " 5", 0},
		{"a date in the past", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := connectors.ParseRetryAfter(tc.v); got != tc.want {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %v", tc.v, got, tc.want)
			}
		})
	}
	t.Run("a date in the future", func(t *testing.T) {
		got := connectors.ParseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		if got < 58*time.Minute || got > time.Hour {
			t.Fatalf("got %v, want about an hour", got)
		}
	})
}

// A service's hint is its word, and a server's answer is not to be trusted
// with how long keep waits: ten years, or seconds past what a Duration
// holds (which wrapped to a negative wait), come to MaxRetryAfter, a wait
// keep still comes back from.
func TestParseRetryAfterAbsurd(t *testing.T) {
	for _, v := range []string{
		"315360000",            // ten years in seconds
		"99999999999",          // past a Duration's nanoseconds
		"9223372036854775807",  // the largest int
		"99999999999999999999", // past it
		"Fri, 31 Dec 9999 23:59:59 GMT",
	} {
		if got := connectors.ParseRetryAfter(v); got != connectors.MaxRetryAfter {
			t.Errorf("ParseRetryAfter(%q) = %v, want MaxRetryAfter (%v)", v, got, connectors.MaxRetryAfter)
		}
	}
	if got := connectors.ParseRetryAfter("86400"); got != 24*time.Hour {
		t.Errorf("a day's wait is %v, want it as said", got)
	}
}
