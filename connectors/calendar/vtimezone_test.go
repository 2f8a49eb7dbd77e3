package calendar_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// Outlook's and Exchange's own definitions of two Windows zones, as they
// send them with every invitation: DST rules, onsets from 1601.
const (
	easternVTIMEZONE = "BEGIN:VTIMEZONE\r\nTZID:Eastern Standard Time\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=11\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=2SU;BYMONTH=3\r\nEND:DAYLIGHT\r\n" +
		"END:VTIMEZONE\r\n"
	westEuropeVTIMEZONE = "BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:16010101T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:16010101T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\n" +
		"END:VTIMEZONE\r\n"
	// the US rules before and after 2007, as Apple writes a zone with a
	// history: onsets bounded by UNTIL (a UTC moment), then new ones
	historyVTIMEZONE = "BEGIN:VTIMEZONE\r\nTZID:US Eastern (history)\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:19870405T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU;UNTIL=20060402T070000Z\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nTZNAME:EDT\r\nEND:DAYLIGHT\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:19671029T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU;UNTIL=20061029T060000Z\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nTZNAME:EST\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:20070311T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nTZNAME:EDT\r\nEND:DAYLIGHT\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:20071104T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nTZNAME:EST\r\nEND:STANDARD\r\n" +
		"END:VTIMEZONE\r\n"
	// a zone of the sender's own naming, without summer time
	officeVTIMEZONE = "BEGIN:VTIMEZONE\r\nTZID:Custom/Office\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nTZNAME:IST\r\nEND:STANDARD\r\n" +
		"END:VTIMEZONE\r\n"
)

// withZone puts vtimezone into an object ahead of its VEVENT, where
// Outlook writes it.
func withZone(ics, vtimezone string) string {
	return strings.Replace(ics, "BEGIN:VEVENT", strings.TrimSuffix(vtimezone, "\r\n")+"\r\nBEGIN:VEVENT", 1)
}

// TestATimeInAZoneGoDoesNotKnowIsReadByTheObjectsOwnVTIMEZONE: Outlook
// and Exchange name Windows zones ("Eastern Standard Time"), and any
// client may name a zone of its own; the object then carries a VTIMEZONE
// saying what the name means. Read by it, 09:00 Eastern is 14:00Z in
// winter and 13:00Z in summer, and a weekly series follows the change of
// clocks; a name with no VTIMEZONE at all is still read as UTC. The
// person's own clock plays no part.
func TestATimeInAZoneGoDoesNotKnowIsReadByTheObjectsOwnVTIMEZONE(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ics, from, to string
		want                []string
	}{
		{"a winter meeting in Eastern Standard Time",
			withZone(radicaletest.Event("est", "Winter", ";TZID=Eastern Standard Time:20261124T090000", ";TZID=Eastern Standard Time:20261124T100000"), easternVTIMEZONE),
			"2026-11-24", "2026-11-25", []string{"Winter 2026-11-24T14:00:00Z-2026-11-24T15:00:00Z"}},
		{"a weekly series across the start of summer time",
			withZone(radicaletest.Event("weekly", "Weekly", ";TZID=Eastern Standard Time:20270301T090000", ";TZID=Eastern Standard Time:20270301T093000",
				"RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;TZID=Eastern Standard Time:20270308T090000"), easternVTIMEZONE),
			"2027-02-28", "2027-03-31", []string{"Weekly 2027-03-01T14:00:00Z-2027-03-01T14:30:00Z", "Weekly 2027-03-15T13:00:00Z-2027-03-15T13:30:00Z"}},
		{"a summer meeting in W. Europe Standard Time",
			withZone(radicaletest.Event("cet", "Summer", ";TZID=W. Europe Standard Time:20270701T120000", ";TZID=W. Europe Standard Time:20270701T130000"), westEuropeVTIMEZONE),
			"2027-07-01", "2027-07-02", []string{"Summer 2027-07-01T10:00:00Z-2027-07-01T11:00:00Z"}},
		{"a zone with a history, under the rules of 2006",
			withZone(radicaletest.Event("h2006", "Old rules", ";TZID=US Eastern (history):20060320T090000", ";TZID=US Eastern (history):20060320T100000",
				"RDATE;TZID=US Eastern (history):20060410T090000,20061101T090000"), historyVTIMEZONE),
			"2006-03-01", "2006-12-01", []string{"Old rules 2006-03-20T14:00:00Z-2006-03-20T15:00:00Z", "Old rules 2006-04-10T13:00:00Z-2006-04-10T14:00:00Z",
				"Old rules 2006-11-01T14:00:00Z-2006-11-01T15:00:00Z"}},
		{"a zone with a history, under the rules of 2027",
			withZone(radicaletest.Event("h2027", "New rules", ";TZID=US Eastern (history):20270320T090000", ";TZID=US Eastern (history):20270320T100000",
				"RDATE;TZID=US Eastern (history):20271101T090000,20271110T090000"), historyVTIMEZONE),
			"2027-03-01", "2027-12-01", []string{"New rules 2027-03-20T13:00:00Z-2027-03-20T14:00:00Z", "New rules 2027-11-01T13:00:00Z-2027-11-01T14:00:00Z",
				"New rules 2027-11-10T14:00:00Z-2027-11-10T15:00:00Z"}},
		{"a zone of the sender's own naming, at a fixed offset",
			withZone(radicaletest.Event("office", "Office", ";TZID=Custom/Office:20261124T100000", ";TZID=Custom/Office:20261124T110000"), officeVTIMEZONE),
			"2026-11-24", "2026-11-25", []string{"Office 2026-11-24T04:30:00Z-2026-11-24T05:30:00Z"}},
		{"a name no VTIMEZONE explains is read as UTC",
			radicaletest.Event("unknown", "Unknown", ";TZID=Nowhere Standard Time:20261124T100000", ";TZID=Nowhere Standard Time:20261124T110000"),
			"2026-11-24", "2026-11-25", []string{"Unknown 2026-11-24T10:00:00Z-2026-11-24T11:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := calendar.New(calendar.Config{URL: holding(t, tc.ics), Location: tokyo})
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
				got = append(got, fmt.Sprintf("%s %s-%s", m["summary"], m["start"], m["end"]))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestAnEventInAWindowsZoneCanBeUpdated: an update reads the event's
// times to check it still ends after it starts. In a zone Go does not
// know, that read failed and the update was refused as ending before it
// started; it must go through, keep the zone the sender wrote where the
// script left the time alone, and read back at the right times.
func TestAnEventInAWindowsZoneCanBeUpdated(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	r.do(t, "PUT", r.Calendar+"outlook.ics", withZone(radicaletest.Event("outlook-2", "Outlook invite",
		";TZID=W. Europe Standard Time:20261201T120000", ";TZID=W. Europe Standard Time:20261201T130000"), westEuropeVTIMEZONE), http.StatusCreated)

	t.Run("a change of location keeps the times", func(t *testing.T) {
		got := do(t, c, "update", "z-1", map[string]any{"uid": "outlook-2", "location": "Room 2"}).(map[string]any)
		if got["location"] != "Room 2" || got["start"] != "2026-12-01T11:00:00Z" || got["end"] != "2026-12-01T12:00:00Z" {
			t.Fatalf("updated event %v, want Room 2 from 11:00Z to 12:00Z", got)
		}
	})

	t.Run("a new start keeps the end in the sender's zone", func(t *testing.T) {
		got := do(t, c, "update", "z-2", map[string]any{"uid": "outlook-2", "start": "2026-12-01T10:30:00Z"}).(map[string]any)
		if got["start"] != "2026-12-01T10:30:00Z" || got["end"] != "2026-12-01T12:00:00Z" {
			t.Fatalf("updated event %v, want 10:30Z to 12:00Z", got)
		}
		ev := do(t, c, "event", "", map[string]any{"uid": "outlook-2"}).(map[string]any)
		if ev["start"] != "2026-12-01T10:30:00Z" || ev["end"] != "2026-12-01T12:00:00Z" || ev["location"] != "Room 2" {
			t.Fatalf("read back %v", ev)
		}
		raw := r.Get(t, r.Calendar+"outlook.ics")
		if !strings.Contains(raw, "DTEND;TZID=W. Europe Standard Time:20261201T130000") || !strings.Contains(raw, "TZID:W. Europe Standard Time") {
			t.Fatalf("the stored object lost the sender's zone:\n%s", raw)
		}
		if v, _ := reconcile(t, c, "update", "z-2", map[string]any{"uid": "outlook-2", "start": "2026-12-01T10:30:00Z"}); v != connectors.Applied {
			t.Fatalf("the applied update reconciles as %s", v)
		}
	})
}
