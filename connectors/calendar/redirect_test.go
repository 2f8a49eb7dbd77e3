package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
)

// TestACreateRedirectedIsNotCalledDone: net/http follows a 302 to a PUT
// with a GET, and the GET's 200 read as the event written. The server
// wrote nothing; the outcome is uncertain, for reconciliation to settle.
func TestACreateRedirectedIsNotCalledDone(t *testing.T) {
	t.Parallel()
	var puts, gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "PROPFIND":
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(propfind))
		case "PUT":
			puts.Add(1)
			http.Redirect(w, r, "/moved/", http.StatusFound)
		default:
			gets.Add(1)
			w.Header().Set("Content-Type", "text/calendar")
			w.Write([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nEND:VCALENDAR\r\n"))
		}
	}))
	t.Cleanup(ts.Close)
	c, err := calendar.New(calendar.Config{URL: ts.URL + "/cal/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Do(context.Background(), connectors.Call{Method: "create", IdempotencyKey: "k",
		Params: map[string]any{"summary": "x", "start": "2026-11-23T10:00:00Z"}})
	if connectors.ClassOf(err) != connectors.Uncertain {
		t.Fatalf("err = %v, want uncertain", err)
	}
	if puts.Load() != 1 || gets.Load() != 0 {
		t.Fatalf("%d PUTs, %d GETs: the redirect was followed", puts.Load(), gets.Load())
	}
}
