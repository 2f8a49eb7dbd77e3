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
