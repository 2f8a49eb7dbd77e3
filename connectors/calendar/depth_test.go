package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
)

// answering is a CalDAV server giving these bodies to PROPFIND (nil: a
// calendar collection's), REPORT and GET.
func answering(t *testing.T, propfindBody, report, get []byte) string {
	t.Helper()
	if propfindBody == nil {
		propfindBody = []byte(propfind)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
			w.Write(get)
		case "PROPFIND":
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write(propfindBody)
		default:
			// a server may say what it likes of its type: go-webdav
			// decodes any 207 as XML
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write(report)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/cal/"
}

// multistatus is an answer listing one object whose prop holds inner.
func multistatus(inner string) []byte {
	return []byte(`<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">` +
		`<D:response><D:href>/cal/u.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag>` + inner +
		`</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`)
}

// elements is n elements nested one in the other.
func elements(n int) string {
	return `<x:a xmlns:x="urn:x">` + strings.Repeat("<x:a>", n-1) + strings.Repeat("</x:a>", n)
}

// components is an event holding X- components nested so that the object
// nests n deep in all, each line ended by eol.
func components(n int, eol string) string {
	s := "BEGIN:VCALENDAR" + eol + "VERSION:2.0" + eol + "PRODID:-//t//t//EN" + eol +
		"BEGIN:VEVENT" + eol + "UID:u" + eol + "DTSTAMP:20261120T080000Z" + eol + "DTSTART:20261124T083000Z" + eol + "SUMMARY:Deep" + eol
	s += strings.Repeat("BEGIN:X-A"+eol, n-2) + strings.Repeat("END:X-A"+eol, n-2)
	return s + "END:VEVENT" + eol + "END:VCALENDAR" + eol
}

var (
	list = connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-30"}}
	one  = connectors.Call{Method: "event", Params: map[string]any{"uid": "u"}}
)

// A server nesting its answer a million deep, XML elements or iCalendar
// components, is refused before go-webdav or go-ical builds it: they
// keep a node, and go-ical a call on the stack, for every level (some
// 300 MB for these answers, and 32 MB of BEGIN lines overflow go-ical's
// stack, which ends the process). Not parallel: TotalAlloc counts the
// whole process, so nothing else may run while it is measured.
func TestAnAnswerNestedTooDeepIsRefusedCheaply(t *testing.T) {
	const deep = 1_000_000
	for _, tc := range []struct {
		name                  string
		propfind, report, get []byte
		call                  connectors.Call
		says                  string
	}{
		{"discovery answered with elements a million deep", multistatus(elements(deep)), nil, nil, list,
			"PROPFIND %s: the answer has XML elements nested more than 256 deep"},
		{"a listing answered with elements a million deep", nil, multistatus(elements(deep)), nil, list,
			"REPORT %s: the answer has XML elements nested more than 256 deep"},
		{"a listing of an object nesting components a million deep", nil,
			multistatus("<C:calendar-data>" + components(deep, "\n") + "</C:calendar-data>"), nil, list,
			"REPORT %s: the answer has iCalendar components nested more than 64 deep"},
		{"an object nesting components a million deep", nil, nil, []byte(components(deep, "\r\n")), one,
			"GET %su.ics: the answer has iCalendar components nested more than 64 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := answering(t, tc.propfind, tc.report, tc.get)
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = c.Do(context.Background(), tc.call)
			runtime.ReadMemStats(&after)
			body := max(len(tc.propfind), len(tc.report), len(tc.get))
			// the answer is read whole, in a buffer grown to it, before
			// it is checked, and a text is held whole as RawToken reads it
			// (twice over the answer, as it grows): what go-webdav's own
			// Token did already, for any answer
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d MB for an answer of %d MB", alloc>>20, body>>20)
			if alloc > uint64(8*body) {
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

// Answers nested as deep as the bounds allow are read as any other.
func TestAnAnswerNestedToTheBoundsIsRead(t *testing.T) {
	t.Parallel()
	ics := components(64, "\r\n")
	// multistatus, response, propstat and prop are four levels
	body := multistatus(elements(connectors.MaxXMLDepth-4) + "<C:calendar-data>" + ics + "</C:calendar-data>")
	c, err := calendar.New(calendar.Config{URL: answering(t, nil, body, []byte(ics))})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []connectors.Call{list, one} {
		got, err := c.Do(context.Background(), call)
		if err != nil {
			t.Fatalf("%s: %v", call.Method, err)
		}
		if l, ok := got.([]any); ok && len(l) == 1 {
			got = l[0]
		}
		if m, _ := got.(map[string]any); m["summary"] != "Deep" {
			t.Fatalf("%s: got %v, want the event", call.Method, got)
		}
	}
}

// The components are counted as go-ical reads the lines: a line folded
// anywhere, even inside BEGIN, or split by an element in the XML around
// it (go-webdav joins an element's text), is still one line, and a name
// is read in any case and ends at a parameter.
func TestComponentsAreCountedAsGoICalReadsThem(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"folded inside BEGIN":      strings.ReplaceAll(components(65, "\r\n"), "BEGIN:X-A", "BEG\r\n IN:X-A"),
		"split by elements in XML": strings.ReplaceAll(components(65, "\n"), "BEGIN:X-A\n", "BEG<x:b xmlns:x=\"urn:x\"/>IN:X-A\n"),
		"written in lower case":    strings.ReplaceAll(components(65, "\n"), "BEGIN:X-A", "begin:x-a"),
		"with a parameter":         strings.ReplaceAll(components(65, "\n"), "BEGIN:X-A", "BEGIN;P=1:X-A"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := multistatus("<C:calendar-data>" + text + "</C:calendar-data>")
			c, err := calendar.New(calendar.Config{URL: answering(t, nil, body, nil)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do(context.Background(), list); connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "more than 64 deep") {
				t.Fatalf("err = %v, want the object refused as too deep", err)
			}
		})
	}
}

// A 2xx answer keep cannot read is the server's fault, not a bug of
// keep's: the read fails as a logic failure that names what was wrong.
func TestAnUnreadableAnswerIsTheServersFault(t *testing.T) {
	t.Parallel()
	for name, report := range map[string][]byte{
		"not XML":             []byte("this is not a multistatus"),
		"an unclosed element": []byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response>`),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := calendar.New(calendar.Config{URL: answering(t, nil, report, nil)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), list)
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "reading the server's answer") {
				t.Fatalf("err = %v (%s), want a logic failure reading the server's answer", err, connectors.ClassOf(err))
			}
		})
	}
}

// An event the server holds that keep cannot read (its start is not a
// date) is the server's data at fault: a logic failure naming the object,
// which the person can mend there, not an internal one.
func TestAnEventKeepCannotReadIsALogicFailure(t *testing.T) {
	t.Parallel()
	ics := strings.Replace(components(2, "\r\n"), "DTSTART:20261124T083000Z", "DTSTART:not-a-date", 1)
	c, err := calendar.New(calendar.Config{URL: answering(t, nil, multistatus("<C:calendar-data>"+ics+"</C:calendar-data>"), []byte(ics))})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []connectors.Call{list, one} {
		_, err := c.Do(context.Background(), call)
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "/cal/u.ics") {
			t.Errorf("%s: err = %v (%s), want a logic failure naming the object", call.Method, err, connectors.ClassOf(err))
		}
	}
}
