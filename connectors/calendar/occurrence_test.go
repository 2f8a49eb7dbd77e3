package calendar_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// TestAnOccurrenceIsNotTakenForTheSeries: events lists a recurring event
// once per occurrence, each with the series' uid and its recurrenceId. A
// script that passes one of them on to update or delete means that
// occurrence; the connector acts on whole events only, so it refuses,
// rather than cancelling or renaming every occurrence. Likewise a create
// asked for a recurrence it cannot make is refused, not made single.
func TestAnOccurrenceIsNotTakenForTheSeries(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	r.do(t, "PUT", r.Calendar+"standup.ics", radicaletest.Event("standup", "Standup",
		":20261124T083000Z", ":20261124T084500Z", "RRULE:FREQ=DAILY;COUNT=3"), http.StatusCreated)
	week := map[string]any{"from": "2026-11-24", "to": "2026-11-30"}
	occ := do(t, c, "events", "", week).([]any)[1].(map[string]any)
	if occ["recurrenceId"] != "2026-11-25T08:30:00Z" {
		t.Fatalf("second occurrence %v", occ)
	}

	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"delete of one occurrence", "delete", map[string]any{"uid": occ["uid"], "recurrenceId": occ["recurrenceId"]}},
		{"update of one occurrence", "update", map[string]any{"uid": occ["uid"], "recurrenceId": occ["recurrenceId"], "summary": "Standup (cancelled)"}},
		{"create of a recurring event", "create", map[string]any{"summary": "Weekly", "start": "2026-11-24T10:00:00Z", "recurrence": "FREQ=WEEKLY"}},
	} {
		t.Run(tc.name+" is refused, with nothing done", func(t *testing.T) {
			_, err := c.Do(context.Background(), connectors.Call{Method: tc.method, Params: tc.params, IdempotencyKey: "k-" + tc.method})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "recurren") {
				t.Fatalf("err = %v, want a logic failure naming the recurrence parameter", err)
			}
			evs := do(t, c, "events", "", week).([]any)
			var got []string
			for _, e := range evs {
				got = append(got, e.(map[string]any)["summary"].(string))
			}
			if strings.Join(got, ",") != "Standup,Standup,Standup" {
				t.Fatalf("the week holds %q, want the three standups untouched", got)
			}
		})
	}
}
