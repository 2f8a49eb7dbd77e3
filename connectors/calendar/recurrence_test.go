package calendar_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// TestEveryOccurrenceIsListedAsTheCalendarAppShowsIt: RFC 5545 makes a
// series from DTSTART, RRULE, RDATE (extra occurrences) and EXDATE
// (removed ones), and lets RDATE and EXDATE hold comma-separated lists,
// as Outlook and Exchange write them. A listing must show the extra
// occurrences and drop every removed one; a list must not fail the
// listing of the whole calendar.
func TestEveryOccurrenceIsListedAsTheCalendarAppShowsIt(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	r.do(t, "PUT", r.Calendar+"plain.ics", radicaletest.Event("plain", "Plain", ":20261124T120000Z", ":20261124T130000Z"), http.StatusCreated)

	for _, tc := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"removed occurrences given as a list", []string{"RRULE:FREQ=DAILY;COUNT=5", "EXDATE:20261125T083000Z,20261127T083000Z"},
			[]string{"2026-11-24T08:30:00Z", "2026-11-26T08:30:00Z", "2026-11-28T08:30:00Z"}},
		{"extra occurrences beside the rule", []string{"RRULE:FREQ=DAILY;COUNT=2", "RDATE:20261127T083000Z"},
			[]string{"2026-11-24T08:30:00Z", "2026-11-25T08:30:00Z", "2026-11-27T08:30:00Z"}},
		{"extra occurrences alone, as a list", []string{"RDATE:20261126T083000Z,20261128T083000Z"},
			[]string{"2026-11-24T08:30:00Z", "2026-11-26T08:30:00Z", "2026-11-28T08:30:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid := strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			r.do(t, "PUT", r.Calendar+uid+".ics", radicaletest.Event(uid, "Series", ":20261124T083000Z", ":20261124T084500Z", tc.extra...), http.StatusCreated)
			t.Cleanup(func() { r.do(t, "DELETE", r.Calendar+uid+".ics", "", http.StatusOK) })
			evs := do(t, c, "events", "", map[string]any{"from": "2026-11-24", "to": "2026-11-30"}).([]any)
			var got []string
			plain := false
			for _, e := range evs {
				m := e.(map[string]any)
				switch m["uid"] {
				case uid:
					got = append(got, fmt.Sprint(m["start"]))
				case "plain":
					plain = true
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || !plain {
				t.Fatalf("occurrences %q (the other event listed: %v), want %q", got, plain, tc.want)
			}
		})
	}
}
