package calendar_test

import (
	"net/http"
	"testing"
	"time"

	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// TestAFloatingTimeIsThePersonsOwnClock: an event written without a zone
// (RFC 5545's floating time: "10:00 wherever I am") is at 10:00 on the
// person's clock, as their calendar app shows it, not at 10:00 UTC; a
// daily series of them stays at 10:00 across the change to summer time,
// and an event with a zone keeps its own.
func TestAFloatingTimeIsThePersonsOwnClock(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{Location: ny})
	r.do(t, "PUT", r.Calendar+"floating.ics", radicaletest.Event("floating", "Dentist", ":20261124T100000", ":20261124T110000"), http.StatusCreated)
	r.do(t, "PUT", r.Calendar+"zoned.ics", radicaletest.Event("zoned", "Call", ":20261124T100000Z", ":20261124T110000Z"), http.StatusCreated)
	r.do(t, "PUT", r.Calendar+"daily.ics", radicaletest.Event("daily", "Walk", ":20270312T100000", ":20270312T103000", "RRULE:FREQ=DAILY;COUNT=3"), http.StatusCreated)

	got := map[string][]string{}
	for _, e := range do(t, c, "events", "", map[string]any{"from": "2026-11-23", "to": "2026-11-26"}).([]any) {
		m := e.(map[string]any)
		got[m["uid"].(string)] = append(got[m["uid"].(string)], m["start"].(string))
	}
	// 10:00 in New York in November is 15:00 UTC
	if s := got["floating"]; len(s) != 1 || s[0] != "2026-11-24T15:00:00Z" {
		t.Errorf("the floating 10:00 listed at %v, want 2026-11-24T15:00:00Z (10:00 in New York)", s)
	}
	if s := got["zoned"]; len(s) != 1 || s[0] != "2026-11-24T10:00:00Z" {
		t.Errorf("the 10:00Z event listed at %v, want its own time", s)
	}
	var walks []string
	for _, e := range do(t, c, "events", "", map[string]any{"from": "2027-03-12", "to": "2027-03-15"}).([]any) {
		if m := e.(map[string]any); m["uid"] == "daily" {
			walks = append(walks, m["start"].(string))
		}
	}
	// summer time starts on 14 March 2027: 10:00 is 15:00Z, then 14:00Z
	want := []string{"2027-03-12T15:00:00Z", "2027-03-13T15:00:00Z", "2027-03-14T14:00:00Z"}
	if len(walks) != 3 || walks[0] != want[0] || walks[1] != want[1] || walks[2] != want[2] {
		t.Errorf("the floating daily walk listed at %v, want %v", walks, want)
	}
}
