package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
)

// holding is a CalDAV server whose calendar holds the one object ics,
// at /cal/u.ics: every query answers with it, as a server does that
// leaves expansion to the client; a GET of any other name finds nothing.
func holding(t *testing.T, ics string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.URL.Path != "/cal/u.ics" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
			w.Write([]byte(ics))
			return
		}
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		if r.Method == "PROPFIND" {
			w.Write([]byte(propfind))
			return
		}
		w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:response><D:href>/cal/u.ics</D:href>
<D:propstat><D:prop><D:getetag>"1"</D:getetag><C:calendar-data>` + ics + `</C:calendar-data></D:prop>
<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`))
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/cal/"
}

func repeating(rule, start string) string {
	return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:often\r\nDTSTAMP:20261120T080000Z\r\n" +
		"DTSTART:" + start + "\r\nDURATION:PT1S\r\nRRULE:" + rule + "\r\nSUMMARY:Often\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
}

// TestARuleRepeatingTooOftenFailsTheListingInsteadOfTheHost: a recurring
// event is expanded by walking its rule from DTSTART. One calendar entry
// (an invitation is enough) repeating every second for years must not
// hold a CPU past the call's deadline, nor one every minute fill memory
// with half a million occurrences: the listing fails quickly, as a logic
// failure naming the event.
func TestARuleRepeatingTooOftenFailsTheListingInsteadOfTheHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, rule, start, from, to string
	}{
		{"every second since last year, listing two seconds", "FREQ=SECONDLY", "20250101T000000Z", "2026-11-01T00:00:00Z", "2026-11-01T00:00:02Z"},
		{"every minute, listing a year", "FREQ=MINUTELY", "20260101T000000Z", "2026-01-01", "2026-12-31"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// the deadline far off: the bound on the walk, not the clock,
			// must be what ends the listing (a deadline's failure is not
			// the logic failure asked for below)
			c, err := calendar.New(calendar.Config{URL: holding(t, repeating(tc.rule, tc.start)), Timeout: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": tc.from, "to": tc.to}})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "often") && !strings.Contains(err.Error(), "events in the range") {
				n := 0
				if evs, ok := got.([]any); ok {
					n = len(evs)
				}
				t.Fatalf("%d events, err = %v; want a logic failure saying the event repeats too often", n, err)
			}
		})
	}

	t.Run("a daily event from long ago still lists", func(t *testing.T) {
		t.Parallel()
		c, err := calendar.New(calendar.Config{URL: holding(t, repeating("FREQ=DAILY", "19700101T090000Z"))})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": "2026-01-01", "to": "2027-01-01"}})
		if err != nil || len(got.([]any)) != 365 {
			t.Fatalf("err = %v, %d occurrences, want 365", err, len(got.([]any)))
		}
	})
}
