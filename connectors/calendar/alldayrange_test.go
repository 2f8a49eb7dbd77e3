package calendar_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// vevent is one VEVENT's lines, start and end given with their
// parameters (";VALUE=DATE:20261128").
func vevent(uid, start, end string) string {
	return "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20261101T000000Z\r\nDTSTART" + start + "\r\nDTEND" + end +
		"\r\nSUMMARY:" + uid + "\r\nEND:VEVENT\r\n"
}

func vcalendar(events ...string) string {
	return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n"
}

// aroundThe29th are all-day events on 28, 29 and 30 November 2026, and
// timed ones half an hour into the 29th and the 30th on the person's own
// clock, written with their zone.
func aroundThe29th(tzid string) []string {
	return []string{
		vevent("day28", ";VALUE=DATE:20261128", ";VALUE=DATE:20261129"),
		vevent("day29", ";VALUE=DATE:20261129", ";VALUE=DATE:20261130"),
		vevent("day30", ";VALUE=DATE:20261130", ";VALUE=DATE:20261201"),
		vevent("timed29", ";TZID="+tzid+":20261129T003000", ";TZID="+tzid+":20261129T010000"),
		vevent("timed30", ";TZID="+tzid+":20261130T003000", ";TZID="+tzid+":20261130T010000"),
	}
}

// uidsOn is the uids an events call lists, in order.
func uidsOn(t *testing.T, c *calendar.Connector, from, to string) []string {
	t.Helper()
	got, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": from, "to": to}})
	if err != nil {
		t.Fatalf("events %s to %s: %v", from, to, err)
	}
	var uids []string
	for _, e := range got.([]any) {
		uids = append(uids, e.(map[string]any)["uid"].(string))
	}
	return uids
}

// TestAnAllDayEventIsOnThePersonsOwnDay: a date (an all-day event's
// start and end, or a listing's from and to) is a day on the person's
// clock (RFC 5545 §3.3.4), as a calendar app shows it, not a day in UTC.
// The events of 29 November are that day's all-day event and the events
// timed in it, whether the day is asked for as dates or as the times it
// starts and ends, east of UTC and west of it.
func TestAnAllDayEventIsOnThePersonsOwnDay(t *testing.T) {
	t.Parallel()
	for _, zone := range []struct{ name, from, to string }{
		{"Europe/Berlin", "2026-11-29T00:00:00+01:00", "2026-11-30T00:00:00+01:00"},
		{"America/New_York", "2026-11-29T00:00:00-05:00", "2026-11-30T00:00:00-05:00"},
		{"Pacific/Auckland", "2026-11-29T00:00:00+13:00", "2026-11-30T00:00:00+13:00"},
	} {
		loc, err := time.LoadLocation(zone.name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := calendar.New(calendar.Config{URL: holding(t, vcalendar(aroundThe29th(zone.name)...)), Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct{ name, from, to string }{
			{"as dates", "2026-11-29", "2026-11-30"},
			{"as times", zone.from, zone.to},
		} {
			t.Run(zone.name+" "+r.name, func(t *testing.T) {
				t.Parallel()
				if got, want := uidsOn(t, c, r.from, r.to), []string{"day29", "timed29"}; !slices.Equal(got, want) {
					t.Errorf("the events of the 29th are %v, want %v", got, want)
				}
			})
		}
	}
}

// TestTheServerDoesNotDropAnAllDayEventOfThePersonsDay: CalDAV servers
// read a date in a query's time-range by their own rule (Radicale: as
// UTC), which is not the person's day. Far east of UTC the first hours
// of the 29th are all on the 28th in UTC; the 29th's all-day event is
// on then, and must not be left out by the server's reading.
func TestTheServerDoesNotDropAnAllDayEventOfThePersonsDay(t *testing.T) {
	t.Parallel()
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{Location: auckland})
	for _, day := range []string{"28", "29", "30"} {
		next := map[string]string{"28": "29", "29": "30", "30": "1201"}[day]
		if next != "1201" {
			next = "11" + next
		}
		r.do(t, "PUT", r.Calendar+"day"+day+".ics",
			radicaletest.Event("day"+day, "Day "+day, ";VALUE=DATE:202611"+day, ";VALUE=DATE:2026"+next), http.StatusCreated)
	}
	// 00:00 to 10:00 on the 29th in Auckland is 11:00 to 21:00 on the 28th UTC
	if got, want := uidsOn(t, c, "2026-11-29T00:00:00+13:00", "2026-11-29T10:00:00+13:00"), []string{"day29"}; !slices.Equal(got, want) {
		t.Errorf("the first hours of the 29th list %v, want %v", got, want)
	}
	if got, want := uidsOn(t, c, "2026-11-29", "2026-11-30"), []string{"day29"}; !slices.Equal(got, want) {
		t.Errorf("the 29th lists %v, want %v", got, want)
	}
}

// TestAMovedAllDayOccurrenceIsNamedByItsDay: an all-day occurrence moved
// into the listed range from a day outside it is named by that day, as
// when its own day is listed too, not by the moment the day starts in
// UTC.
func TestAMovedAllDayOccurrenceIsNamedByItsDay(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	ics := vcalendar(
		"BEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20261101T000000Z\r\nDTSTART;VALUE=DATE:20261120\r\nDTEND;VALUE=DATE:20261121\r\n"+
			"RRULE:FREQ=DAILY;COUNT=6\r\nSUMMARY:Leave\r\nEND:VEVENT\r\n",
		"BEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20261101T000000Z\r\nRECURRENCE-ID;VALUE=DATE:20261122\r\n"+
			"DTSTART;VALUE=DATE:20261129\r\nDTEND;VALUE=DATE:20261130\r\nSUMMARY:Moved\r\nEND:VEVENT\r\n")
	c, err := calendar.New(calendar.Config{URL: holding(t, ics), Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"2026-11-29", "2026-11-20"} {
		got, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": from, "to": "2026-11-30"}})
		if err != nil {
			t.Fatal(err)
		}
		var rid any
		for _, e := range got.([]any) {
			if m := e.(map[string]any); m["summary"] == "Moved" {
				rid = m["recurrenceId"]
			}
		}
		if rid != "2026-11-22" {
			t.Errorf("listed from %s, the moved occurrence's recurrenceId is %v, want 2026-11-22", from, rid)
		}
	}
}
