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
)

// review is a weekly series of eight at 09:00Z from Monday 2 November
// 2026, half an hour each in Room A, with the overrides given.
func review(overrides ...string) string {
	ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n" +
		"BEGIN:VEVENT\r\nUID:review\r\nDTSTAMP:20261101T080000Z\r\nDTSTART:20261102T090000Z\r\nDTEND:20261102T093000Z\r\n" +
		"RRULE:FREQ=WEEKLY;COUNT=8\r\nSUMMARY:Review\r\nLOCATION:Room A\r\nEND:VEVENT\r\n"
	for _, o := range overrides {
		ics += "BEGIN:VEVENT\r\nUID:review\r\nDTSTAMP:20261101T080000Z\r\n" + o + "END:VEVENT\r\n"
	}
	return ics + "END:VCALENDAR\r\n"
}

// The overrides an app writes when the person edits one occurrence "and
// all following": from the third on, an hour later, an hour long, in
// Room B and renamed; from the seventh on, earlier again and renamed
// again; and the fifth alone moved to the afternoon.
const (
	fromThird = "RECURRENCE-ID;RANGE=THISANDFUTURE:20261116T090000Z\r\nDTSTART:20261116T100000Z\r\nDTEND:20261116T110000Z\r\n" +
		"SUMMARY:Review (moved)\r\nLOCATION:Room B\r\n"
	fromSeventh = "RECURRENCE-ID;RANGE=THISANDFUTURE:20261214T090000Z\r\nDTSTART:20261214T083000Z\r\nDTEND:20261214T090000Z\r\n" +
		"SUMMARY:Review (early)\r\nLOCATION:Room C\r\n"
	fifthAlone = "RECURRENCE-ID:20261130T090000Z\r\nDTSTART:20261130T140000Z\r\nDTEND:20261130T143000Z\r\n" +
		"SUMMARY:Review (afternoon)\r\nLOCATION:Room D\r\n"
)

// listed is each event of evs as "summary location start–end rid".
func listed(evs any) []string {
	var out []string
	for _, e := range evs.([]any) {
		m := e.(map[string]any)
		out = append(out, fmt.Sprintf("%s|%s|%s–%s|%s", m["summary"], m["location"], m["start"], m["end"], m["recurrenceId"]))
	}
	return out
}

func sameList(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("listed\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestAnOverrideOfThisAndFutureOccurrencesChangesEveryLaterOne: an
// override whose RECURRENCE-ID says RANGE=THISANDFUTURE (RFC 5545
// §3.2.13) is how a calendar app writes "edit this and all following
// occurrences": it stands for its own occurrence and every later one,
// each moved as far as it moved its own and taking its summary,
// location and length. An override of one occurrence still wins over it
// there, and of several such overrides the latest at or before an
// occurrence is the one that applies.
func TestAnOverrideOfThisAndFutureOccurrencesChangesEveryLaterOne(t *testing.T) {
	t.Parallel()
	events := func(t *testing.T, ics, from, to string) []string {
		t.Helper()
		c, err := calendar.New(calendar.Config{URL: holding(t, ics)})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": from, "to": to}})
		if err != nil {
			t.Fatal(err)
		}
		return listed(evs)
	}

	t.Run("every occurrence from the third is moved an hour, renamed and an hour long", func(t *testing.T) {
		t.Parallel()
		sameList(t, events(t, review(fromThird), "2026-11-01", "2027-01-01"), []string{
			"Review|Room A|2026-11-02T09:00:00Z–2026-11-02T09:30:00Z|2026-11-02T09:00:00Z",
			"Review|Room A|2026-11-09T09:00:00Z–2026-11-09T09:30:00Z|2026-11-09T09:00:00Z",
			"Review (moved)|Room B|2026-11-16T10:00:00Z–2026-11-16T11:00:00Z|2026-11-16T09:00:00Z",
			"Review (moved)|Room B|2026-11-23T10:00:00Z–2026-11-23T11:00:00Z|2026-11-23T09:00:00Z",
			"Review (moved)|Room B|2026-11-30T10:00:00Z–2026-11-30T11:00:00Z|2026-11-30T09:00:00Z",
			"Review (moved)|Room B|2026-12-07T10:00:00Z–2026-12-07T11:00:00Z|2026-12-07T09:00:00Z",
			"Review (moved)|Room B|2026-12-14T10:00:00Z–2026-12-14T11:00:00Z|2026-12-14T09:00:00Z",
			"Review (moved)|Room B|2026-12-21T10:00:00Z–2026-12-21T11:00:00Z|2026-12-21T09:00:00Z",
		})
	})

	t.Run("one occurrence's own override wins, and the latest range applies", func(t *testing.T) {
		t.Parallel()
		// written in no particular order, as apps do
		sameList(t, events(t, review(fromSeventh, fifthAlone, fromThird), "2026-11-01", "2027-01-01"), []string{
			"Review|Room A|2026-11-02T09:00:00Z–2026-11-02T09:30:00Z|2026-11-02T09:00:00Z",
			"Review|Room A|2026-11-09T09:00:00Z–2026-11-09T09:30:00Z|2026-11-09T09:00:00Z",
			"Review (moved)|Room B|2026-11-16T10:00:00Z–2026-11-16T11:00:00Z|2026-11-16T09:00:00Z",
			"Review (moved)|Room B|2026-11-23T10:00:00Z–2026-11-23T11:00:00Z|2026-11-23T09:00:00Z",
			"Review (afternoon)|Room D|2026-11-30T14:00:00Z–2026-11-30T14:30:00Z|2026-11-30T09:00:00Z",
			"Review (moved)|Room B|2026-12-07T10:00:00Z–2026-12-07T11:00:00Z|2026-12-07T09:00:00Z",
			"Review (early)|Room C|2026-12-14T08:30:00Z–2026-12-14T09:00:00Z|2026-12-14T09:00:00Z",
			"Review (early)|Room C|2026-12-21T08:30:00Z–2026-12-21T09:00:00Z|2026-12-21T09:00:00Z",
		})
	})

	t.Run("a range listing only where an occurrence was moved to finds it", func(t *testing.T) {
		t.Parallel()
		// a day and two hours later: the fourth, from Monday 09:00 to
		// Tuesday 11:00, and back: to Sunday 07:00
		later := strings.NewReplacer("DTSTART:20261116T100000Z", "DTSTART:20261117T110000Z", "DTEND:20261116T110000Z", "DTEND:20261117T113000Z").Replace(fromThird)
		sameList(t, events(t, review(later), "2026-11-24", "2026-11-25"), []string{
			"Review (moved)|Room B|2026-11-24T11:00:00Z–2026-11-24T11:30:00Z|2026-11-23T09:00:00Z",
		})
		earlier := strings.NewReplacer("DTSTART:20261116T100000Z", "DTSTART:20261115T070000Z", "DTEND:20261116T110000Z", "DTEND:20261115T073000Z").Replace(fromThird)
		sameList(t, events(t, review(earlier), "2026-11-22", "2026-11-23"), []string{
			"Review (moved)|Room B|2026-11-22T07:00:00Z–2026-11-22T07:30:00Z|2026-11-23T09:00:00Z",
		})
	})

	t.Run("a cancelled one cancels every later occurrence not overridden alone", func(t *testing.T) {
		t.Parallel()
		cancel := "RECURRENCE-ID;RANGE=THISANDFUTURE:20261123T090000Z\r\nDTSTART:20261123T090000Z\r\nDTEND:20261123T093000Z\r\n" +
			"SUMMARY:Review\r\nSTATUS:CANCELLED\r\n"
		sameList(t, events(t, review(cancel, fifthAlone), "2026-11-01", "2027-01-01"), []string{
			"Review|Room A|2026-11-02T09:00:00Z–2026-11-02T09:30:00Z|2026-11-02T09:00:00Z",
			"Review|Room A|2026-11-09T09:00:00Z–2026-11-09T09:30:00Z|2026-11-09T09:00:00Z",
			"Review|Room A|2026-11-16T09:00:00Z–2026-11-16T09:30:00Z|2026-11-16T09:00:00Z",
			"Review (afternoon)|Room D|2026-11-30T14:00:00Z–2026-11-30T14:30:00Z|2026-11-30T09:00:00Z",
		})
	})

	t.Run("an all-day series is moved by whole days", func(t *testing.T) {
		t.Parallel()
		// weekly on Fridays; from the second on, the Monday after
		// instead: three days, which are 73 hours for the third, over
		// the end of summer time in Berlin (Sunday 25 October)
		ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n" +
			"BEGIN:VEVENT\r\nUID:day\r\nDTSTAMP:20261001T080000Z\r\nDTSTART;VALUE=DATE:20261009\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\nSUMMARY:Day\r\nEND:VEVENT\r\n" +
			"BEGIN:VEVENT\r\nUID:day\r\nDTSTAMP:20261001T080000Z\r\nRECURRENCE-ID;RANGE=THISANDFUTURE;VALUE=DATE:20261016\r\nDTSTART;VALUE=DATE:20261019\r\nSUMMARY:Day off\r\nEND:VEVENT\r\n" +
			"END:VCALENDAR\r\n"
		berlin, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		c, err := calendar.New(calendar.Config{URL: holding(t, ics), Location: berlin})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: map[string]any{"from": "2026-10-01", "to": "2026-11-30"}})
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, listed(evs), []string{
			"Day||2026-10-09–2026-10-10|2026-10-09",
			"Day off||2026-10-19–2026-10-20|2026-10-16",
			"Day off||2026-10-26–2026-10-27|2026-10-23",
		})
	})
}

// TestEventSkipsOccurrencesARangeCancelled: event reads a series at the
// first occurrence events lists; a cancelled override of this and future
// occurrences removes them all. A series whose first is EXDATEd and the
// rest cancelled so has none left and stays at DTSTART, not at the
// second occurrence, which events does not list; one with the fifth
// overridden alone starts there.
func TestEventSkipsOccurrencesARangeCancelled(t *testing.T) {
	t.Parallel()
	ics := strings.Replace(review(
		"RECURRENCE-ID;RANGE=THISANDFUTURE:20261109T090000Z\r\nDTSTART:20261109T090000Z\r\nDTEND:20261109T093000Z\r\nSUMMARY:Review\r\nSTATUS:CANCELLED\r\n"),
		"RRULE:", "EXDATE:20261102T090000Z\r\nRRULE:", 1)
	for _, tc := range []struct {
		name, ics, want string
	}{
		{"none left", ics, "2026-11-02T09:00:00Z"},
		{"an occurrence overridden alone inside the range is the first",
			strings.Replace(ics, "END:VCALENDAR", "BEGIN:VEVENT\r\nUID:review\r\nDTSTAMP:20261101T080000Z\r\n"+fifthAlone+"END:VEVENT\r\nEND:VCALENDAR", 1),
			"2026-11-30T09:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := calendar.New(calendar.Config{URL: holding(t, tc.ics)})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := c.Do(context.Background(), connectors.Call{Method: "event", Params: map[string]any{"uid": "review"}})
			if m, _ := ev.(map[string]any); err != nil || m["start"] != tc.want || m["summary"] != "Review" {
				t.Fatalf("event = %v, err = %v; want the series at %s", ev, err, tc.want)
			}
		})
	}
}

// TestAnUpdateKeepsOverridesOfThisAndFutureOccurrences: update rewrites
// the series' main event and sends the object back whole: an override
// of this and future occurrences it did not touch goes back as it was,
// RANGE included, and still applies after.
func TestAnUpdateKeepsOverridesOfThisAndFutureOccurrences(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	r.do(t, "PUT", r.Calendar+"review.ics", review(fromThird), http.StatusCreated)
	do(t, c, "update", "k-rename", map[string]any{"uid": "review", "summary": "Weekly review"})

	stored := r.Get(t, r.Calendar+"review.ics")
	unfolded := strings.ReplaceAll(stored, "\r\n ", "")
	for _, line := range strings.Split(strings.TrimSuffix(fromThird, "\r\n"), "\r\n") {
		if !strings.Contains(unfolded, line+"\r\n") {
			t.Fatalf("the stored object lacks %q:\n%s", line, stored)
		}
	}
	sameList(t, listed(do(t, c, "events", "", map[string]any{"from": "2026-11-01", "to": "2026-11-24"})), []string{
		"Weekly review|Room A|2026-11-02T09:00:00Z–2026-11-02T09:30:00Z|2026-11-02T09:00:00Z",
		"Weekly review|Room A|2026-11-09T09:00:00Z–2026-11-09T09:30:00Z|2026-11-09T09:00:00Z",
		"Review (moved)|Room B|2026-11-16T10:00:00Z–2026-11-16T11:00:00Z|2026-11-16T09:00:00Z",
		"Review (moved)|Room B|2026-11-23T10:00:00Z–2026-11-23T11:00:00Z|2026-11-23T09:00:00Z",
	})
}
