package calendar_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
)

// object is a calendar holding one event, uid u, of these lines.
func object(lines ...string) string {
	return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTAMP:20261001T080000Z\r\nSUMMARY:Day\r\n" +
		strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestADayIsACalendarDay: an all-day event lasts whole days (DTEND less
// DTSTART of dates, a DURATION of days or weeks, or one day by default),
// and RFC 5545 §3.3.6 counts the days and weeks of a DURATION as
// calendar days, whatever their hours. On the day the clocks change a day
// is 23 or 25 hours: every occurrence still ends at its last day's end,
// and a timed one lasting P1D at its own time of day, not an hour off
// (a workflow comparing dates would see the day end a day early). An end
// given by DTEND, a moment, stays that exact time after the start
// (RFC 5545 §3.8.5.3).
func TestADayIsACalendarDay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, zone string
		lines      []string
		from, to   string
		want       []string
	}{
		{"a weekly day over the end of summer time", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20261011", "DTEND;VALUE=DATE:20261012", "RRULE:FREQ=WEEKLY;COUNT=3"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-11–2026-10-12", "2026-10-18–2026-10-19", "2026-10-25–2026-10-26"}},
		{"a weekly day first on the day summer time starts", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20260329", "DTEND;VALUE=DATE:20260330", "RRULE:FREQ=WEEKLY;COUNT=3"},
			"2026-03-01", "2026-05-01",
			[]string{"2026-03-29–2026-03-30", "2026-04-05–2026-04-06", "2026-04-12–2026-04-13"}},
		{"a daily day of DURATION P1D", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20261023", "DURATION:P1D", "RRULE:FREQ=DAILY;COUNT=4"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-23–2026-10-24", "2026-10-24–2026-10-25", "2026-10-25–2026-10-26", "2026-10-26–2026-10-27"}},
		{"a daily day with no end", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20261023", "RRULE:FREQ=DAILY;COUNT=4"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-23–2026-10-24", "2026-10-24–2026-10-25", "2026-10-25–2026-10-26", "2026-10-26–2026-10-27"}},
		{"two days weekly", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20261017", "DTEND;VALUE=DATE:20261019", "RRULE:FREQ=WEEKLY;COUNT=2"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-17–2026-10-19", "2026-10-24–2026-10-26"}},
		{"a week of DURATION P1W, alone", "Europe/Berlin",
			[]string{"DTSTART;VALUE=DATE:20261019", "DURATION:P1W"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-19–2026-10-26"}},
		{"a weekly day over the end of summer time in New York", "America/New_York",
			[]string{"DTSTART;VALUE=DATE:20261025", "DTEND;VALUE=DATE:20261026", "RRULE:FREQ=WEEKLY;COUNT=2"},
			"2026-10-01", "2026-11-30",
			[]string{"2026-10-25–2026-10-26", "2026-11-01–2026-11-02"}},
		{"a timed event of P1D ends at its time the next day", "Europe/Berlin",
			[]string{"DTSTART;TZID=Europe/Berlin:20261024T100000", "DURATION:P1D"},
			"2026-10-01", "2026-11-01",
			// 10:00 summer time, then 10:00 winter time
			[]string{"2026-10-24T08:00:00Z–2026-10-25T09:00:00Z"}},
		{"a daily timed event of P1DT2H: a calendar day, then two hours", "Europe/Berlin",
			[]string{"DTSTART;TZID=Europe/Berlin:20261023T100000", "DURATION:P1DT2H", "RRULE:FREQ=DAILY;COUNT=3"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-23T08:00:00Z–2026-10-24T10:00:00Z", "2026-10-24T08:00:00Z–2026-10-25T11:00:00Z", "2026-10-25T09:00:00Z–2026-10-26T11:00:00Z"}},
		{"an occurrence of P1D is listed while it runs past 24 hours", "Europe/Berlin",
			[]string{"DTSTART;TZID=Europe/Berlin:20261024T100000", "DURATION:P1D", "RRULE:FREQ=DAILY;COUNT=2"},
			"2026-10-25T08:30:00Z", "2026-10-25T08:45:00Z",
			[]string{"2026-10-24T08:00:00Z–2026-10-25T09:00:00Z"}},
		{"a daily timed event ended by DTEND lasts its exact hours", "Europe/Berlin",
			// 25 hours, over the change; every occurrence lasts 25 too
			[]string{"DTSTART;TZID=Europe/Berlin:20261024T100000", "DTEND;TZID=Europe/Berlin:20261025T100000", "RRULE:FREQ=DAILY;COUNT=2"},
			"2026-10-01", "2026-11-01",
			[]string{"2026-10-24T08:00:00Z–2026-10-25T09:00:00Z", "2026-10-25T09:00:00Z–2026-10-26T10:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := calendar.New(calendar.Config{URL: holding(t, object(tc.lines...)), Location: zone(t, tc.zone)})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": tc.from, "to": tc.to}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs.([]any) {
				m := e.(map[string]any)
				got = append(got, fmt.Sprintf("%s–%s", m["start"], m["end"]))
			}
			sameList(t, got, tc.want)
		})
	}
}

// TestEventEndsTheFirstOccurrenceOnItsDay: event reads a series at its
// first occurrence listed; when that is on the day the clocks change, it
// too ends at the end of its day.
func TestEventEndsTheFirstOccurrenceOnItsDay(t *testing.T) {
	t.Parallel()
	ics := object("DTSTART;VALUE=DATE:20261018", "DTEND;VALUE=DATE:20261019", "EXDATE;VALUE=DATE:20261018", "RRULE:FREQ=WEEKLY;COUNT=3")
	c, err := calendar.New(calendar.Config{URL: holding(t, ics), Location: zone(t, "Europe/Berlin")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := c.Do(context.Background(), connectors.Call{Method: "event", Params: map[string]any{"uid": "u"}})
	if m, _ := ev.(map[string]any); err != nil || m["start"] != "2026-10-25" || m["end"] != "2026-10-26" {
		t.Fatalf("event = %v, err = %v; want the series from 2026-10-25 to 2026-10-26", ev, err)
	}
}
