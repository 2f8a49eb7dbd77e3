package calendar_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
)

// standup is a daily series of three at 08:30Z from 24 November 2026,
// with the overrides given (RECURRENCE-ID components), as Outlook,
// Google and Apple write a cancelled occurrence: the instance kept,
// marked STATUS:CANCELLED.
func standup(overrides ...string) string {
	ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n" +
		"BEGIN:VEVENT\r\nUID:standup\r\nDTSTAMP:20261120T080000Z\r\nDTSTART:20261124T083000Z\r\nDTEND:20261124T084500Z\r\n" +
		"RRULE:FREQ=DAILY;COUNT=3\r\nSUMMARY:Standup\r\nEND:VEVENT\r\n"
	for _, o := range overrides {
		ics += "BEGIN:VEVENT\r\nUID:standup\r\nDTSTAMP:20261120T080000Z\r\n" + o + "END:VEVENT\r\n"
	}
	return ics + "END:VCALENDAR\r\n"
}

// TestACancelledOccurrenceIsNotListed: an occurrence cancelled by its
// override is gone, as if EXDATE removed it: events does not list it,
// neither at its own time nor at the time the override moved it to, and
// event, which reads a series as its first occurrence, starts at the
// first one not cancelled.
func TestACancelledOccurrenceIsNotListed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		override string
		want     []string
		first    string
	}{
		{"the second occurrence cancelled in place",
			"RECURRENCE-ID:20261125T083000Z\r\nDTSTART:20261125T083000Z\r\nDTEND:20261125T084500Z\r\nSUMMARY:Standup\r\nSTATUS:CANCELLED\r\n",
			[]string{"2026-11-24T08:30:00Z", "2026-11-26T08:30:00Z"}, "2026-11-24T08:30:00Z"},
		{"the second occurrence moved and then cancelled",
			"RECURRENCE-ID:20261125T083000Z\r\nDTSTART:20261127T150000Z\r\nDTEND:20261127T151500Z\r\nSUMMARY:Standup\r\nSTATUS:CANCELLED\r\n",
			[]string{"2026-11-24T08:30:00Z", "2026-11-26T08:30:00Z"}, "2026-11-24T08:30:00Z"},
		{"the first occurrence cancelled",
			"RECURRENCE-ID:20261124T083000Z\r\nDTSTART:20261124T083000Z\r\nDTEND:20261124T084500Z\r\nSUMMARY:Standup\r\nSTATUS:CANCELLED\r\n",
			[]string{"2026-11-25T08:30:00Z", "2026-11-26T08:30:00Z"}, "2026-11-25T08:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := calendar.New(calendar.Config{URL: holding(t, standup(tc.override))})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-30"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs.([]any) {
				got = append(got, e.(map[string]any)["start"].(string))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("listed %q, want %q", got, tc.want)
			}
			ev, err := c.Do(context.Background(), connectors.Call{Method: "event", Params: map[string]any{"uid": "standup"}})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := ev.(map[string]any)
			if m["start"] != tc.first || m["end"] != strings.Replace(tc.first, "08:30", "08:45", 1) {
				t.Fatalf("event = %v, want the first occurrence not cancelled, %s", ev, tc.first)
			}
		})
	}

	t.Run("a series whose rule can't be walked is still read by event, at DTSTART", func(t *testing.T) {
		t.Parallel()
		c, err := calendar.New(calendar.Config{URL: holding(t, strings.Replace(standup(), "FREQ=DAILY;COUNT=3", "FREQ=FORTNIGHTLY", 1))})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := c.Do(context.Background(), connectors.Call{Method: "event", Params: map[string]any{"uid": "standup"}})
		if m, _ := ev.(map[string]any); err != nil || m["start"] != "2026-11-24T08:30:00Z" || m["recurrence"] != "FREQ=FORTNIGHTLY" {
			t.Fatalf("event = %v, err = %v; want the series at its DTSTART", ev, err)
		}
	})

	t.Run("an override not cancelled is still listed in place of its occurrence", func(t *testing.T) {
		t.Parallel()
		c, err := calendar.New(calendar.Config{URL: holding(t, standup(
			"RECURRENCE-ID:20261125T083000Z\r\nDTSTART:20261125T090000Z\r\nDTEND:20261125T091500Z\r\nSUMMARY:Standup (late)\r\nSTATUS:CONFIRMED\r\n"))})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-30"}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs.([]any) {
			m := e.(map[string]any)
			got = append(got, fmt.Sprintf("%s %s", m["summary"], m["start"]))
		}
		want := "Standup 2026-11-24T08:30:00Z,Standup (late) 2026-11-25T09:00:00Z,Standup 2026-11-26T08:30:00Z"
		if strings.Join(got, ",") != want {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})
}
