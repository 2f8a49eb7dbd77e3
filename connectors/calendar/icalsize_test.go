package calendar_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
)

// The bounds on how much iCalendar text one answer holds (depth.go).
const (
	maxItems     = 300_000
	maxParamCopy = 128 << 20
)

// event is an object of an event whose VEVENT holds body after its own
// lines; it has 10 content lines of its own.
func event(uid, body string) string {
	return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:" + uid +
		"\r\nDTSTAMP:20261120T080000Z\r\nDTSTART:20261124T083000Z\r\nSUMMARY:Full\r\n" + body + "END:VEVENT\r\nEND:VCALENDAR\r\n"
}

// objects is a multistatus listing each of texts as an object.
func objects(texts ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">`)
	for i, text := range texts {
		fmt.Fprintf(&b, `<D:response><D:href>/cal/u%d.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag><C:calendar-data>%s</C:calendar-data>`+
			`</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`, i, text)
	}
	b.WriteString(`</D:multistatus>`)
	return []byte(b.String())
}

// full is an event of exactly maxItems lines and parameter values, and
// then more: 10 lines of the event's own, 2 items a filler line, a line
// folded in two and one more.
func full(more string) string {
	return event("u", strings.Repeat("X-A;P=1:\r\n", (maxItems-12)/2)+"X-B:folded\r\n  in two\r\nX-C:v\r\n"+more)
}

// copying is one property whose parameter values cost go-ical exactly n
// bytes of copying: a value of l bytes costs l(l+1)/2.
func copying(n int) string {
	line := "X-A"
	for n > 0 {
		l := 1
		for (l+1)*(l+2)/2 <= n {
			l++
		}
		line += ";P=" + strings.Repeat("a", l)
		n -= l * (l + 1) / 2
	}
	return line + ":v\r\n"
}

// A server answering with more iCalendar than keep will have go-ical
// build is refused before go-ical builds any of it: 16 MB of empty
// components made it allocate 330 MB, 4 bytes of "X:" and a line break
// cost 330 bytes, and a parameter value of n bytes costs n²/2 and as
// much time (256 KB took 20 s). Not parallel: TotalAlloc counts the
// whole process, so nothing else may run while it is measured.
func TestAnAnswerHoldingTooMuchICalendarIsRefusedCheaply(t *testing.T) {
	empty := strings.Repeat("BEGIN:X-A\r\nEND:X-A\r\n", 16<<20/len("BEGIN:X-A\r\nEND:X-A\r\n"))
	// each object well under the bound, all of them over it
	many := make([]string, 100)
	for i := range many {
		many[i] = event(fmt.Sprintf("u%d", i), strings.Repeat("X:\r\n", maxItems/len(many)))
	}
	items := fmt.Sprintf("the answer has more than %d iCalendar lines and parameter values", maxItems)
	params := fmt.Sprintf("the answer has iCalendar parameter values too long: go-ical would copy more than %d MiB", maxParamCopy>>20)
	for _, tc := range []struct {
		name        string
		report, get []byte
		call        connectors.Call
		says        string
	}{
		{"a listing of 16 MB of empty components", objects(event("u", empty)), nil, list, "REPORT %s: " + items},
		{"an object of 16 MB of empty components", nil, []byte(event("u", empty)), one, "GET %su.ics: " + items},
		{"a listing of objects together past the bound", objects(many...), nil, list, "REPORT %s: " + items},
		{"an object of one line past the bound", nil, []byte(full("X-D:v\r\n")), one, "GET %su.ics: " + items},
		{"a listing of a parameter value too long", objects(event("u", copying(maxParamCopy+1))), nil, list, "REPORT %s: " + params},
		{"an object of parameter values together too long", nil, []byte(event("u", strings.Repeat(copying(maxParamCopy/8), 8)+copying(1))), one, "GET %su.ics: " + params},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := answering(t, nil, tc.report, tc.get)
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = c.Do(context.Background(), tc.call)
			runtime.ReadMemStats(&after)
			body := max(len(tc.report), len(tc.get))
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d MB for an answer of %d MB", alloc>>20, body>>20)
			// the answer is read whole and walked as depth_test.go says,
			// and discovery and the call itself take a little of their own
			if alloc > uint64(8*body+1<<20) {
				t.Errorf("the call allocated %d MB for an answer of %d MB", alloc>>20, body>>20)
			}
			if connectors.ClassOf(err) != connectors.Logic {
				t.Fatalf("err = %v, want a logic failure", err)
			}
			if want := strings.ReplaceAll(tc.says, "%s", url); !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %q, want it to say %q", err, want)
			}
		})
	}
}

// Answers holding as much iCalendar as the bounds allow are read as any
// other, lines counted as go-ical reads them: a folded line is one line.
func TestAnAnswerHoldingICalendarToTheBoundsIsRead(t *testing.T) {
	t.Parallel()
	lines := full("")
	copies := event("u", copying(maxParamCopy))
	for _, tc := range []struct {
		name        string
		report, get []byte
		call        connectors.Call
	}{
		{"a listing of as many lines and values as allowed", objects(lines), nil, list},
		{"an object of as many lines and values as allowed", nil, []byte(lines), one},
		{"a listing of parameter values as long as allowed", objects(copies), nil, list},
		{"an object of parameter values as long as allowed", nil, []byte(copies), one},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := calendar.New(calendar.Config{URL: answering(t, nil, tc.report, tc.get)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Do(context.Background(), tc.call)
			if err != nil {
				t.Fatal(err)
			}
			if l, ok := got.([]any); ok && len(l) == 1 {
				got = l[0]
			}
			if m, _ := got.(map[string]any); m["summary"] != "Full" {
				t.Fatalf("got %v, want the event", got)
			}
		})
	}
}
