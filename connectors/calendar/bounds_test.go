package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
)

// endless is a CalDAV server that discovers fine and then answers with a
// 2xx whose body goes on (up to limit bytes, so a failing test stays
// cheap): one event whose DESCRIPTION never ends. served counts what it
// wrote.
func endless(t *testing.T, limit int64) (url string, served *atomic.Int64) {
	t.Helper()
	served = &atomic.Int64{}
	chunk := []byte(strings.Repeat("x", 64<<10))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PROPFIND" {
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(propfind))
			return
		}
		head := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTAMP:20261123T090000Z\r\nDTSTART:20261123T100000Z\r\nDESCRIPTION:"
		if r.Method == "REPORT" {
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			head = `<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:response><D:href>/cal/u.ics</D:href><D:propstat><D:prop><C:calendar-data>` + head
		} else {
			w.Header().Set("Content-Type", "text/calendar")
		}
		w.Write([]byte(head))
		for served.Load() < limit {
			n, err := w.Write(chunk)
			served.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/cal/", served
}

// TestAnAnswerTooLargeIsRefusedAsItArrives: a server's answer is read up
// to MaxBody and no further, whatever it says it is, so a hostile or
// broken server cannot fill keep's memory; the call fails saying why.
func TestAnAnswerTooLargeIsRefusedAsItArrives(t *testing.T) {
	t.Parallel()
	const max = 1 << 20
	for _, tc := range []struct {
		name string
		call connectors.Call
	}{
		{"a list of events", connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-24"}}},
		{"one event", connectors.Call{Method: "event", Params: map[string]any{"uid": "u"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, served := endless(t, 256<<20)
			c, err := calendar.New(calendar.Config{URL: url, MaxBody: max, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), tc.call)
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("err = %v, want a logic failure saying the answer is too large", err)
			}
			// the server writes ahead into socket buffers; what matters is
			// that the connector stopped reading near the cap
			if n := served.Load(); n > 16*max {
				t.Fatalf("the server got %d bytes out before the connector stopped", n)
			}
		})
	}
}
