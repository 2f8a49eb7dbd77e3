package calendar_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
)

// propfind is a calendar collection's answer to the connector's discovery.
const propfind = `<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
 <D:response><D:href>/cal/</D:href><D:propstat><D:prop>
  <D:resourcetype><D:collection/><C:calendar/></D:resourcetype>
  <D:displayname>Work</D:displayname>
  <C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>
 </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
</D:multistatus>`

// failing is a CalDAV server that discovers fine and then answers every
// other request with status (and Retry-After), or hangs up after reading it.
func failing(t *testing.T, status int, hangUp bool) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PROPFIND" {
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(propfind))
			return
		}
		if hangUp {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Retry-After", "9")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		w.Write([]byte("refused on purpose"))
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/cal/"
}

func TestFailureClasses(t *testing.T) {
	t.Parallel()
	create := connectors.Call{Method: "create", IdempotencyKey: "k",
		Params: map[string]any{"summary": "x", "start": "2026-11-23T10:00:00Z"}}
	list := connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-24"}}
	cases := []struct {
		name       string
		status     int
		hangUp     bool
		call       connectors.Call
		class      connectors.Class
		retryAfter time.Duration
	}{
		{"a 401 on a create is an auth failure", 401, false, create, connectors.Auth, 0},
		{"a 403 on a read is an auth failure", 403, false, list, connectors.Auth, 0},
		{"a 404 is a logic failure", 404, false, list, connectors.Logic, 0},
		{"a 412 is a logic failure", 412, false, connectors.Call{Method: "delete", Params: map[string]any{"uid": "u"}}, connectors.Logic, 0},
		{"a 500 after a create was sent is uncertain", 500, false, create, connectors.Uncertain, 0},
		{"a 502 on a read is transient", 502, false, list, connectors.Transient, 0},
		{"a 503 is transient with Retry-After", 503, false, create, connectors.Transient, 9 * time.Second},
		{"a 429 is transient with Retry-After", 429, false, list, connectors.Transient, 9 * time.Second},
		{"a create whose connection drops after sending is uncertain", 0, true, create, connectors.Uncertain, 0},
		{"a read whose connection drops is transient", 0, true, list, connectors.Transient, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := failing(t, tc.status, tc.hangUp)
			if tc.call.Method == "delete" {
				url = failing412(t)
			}
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), tc.call)
			var ce *connectors.Error
			if !errors.As(err, &ce) || ce.Class != tc.class || ce.RetryAfter != tc.retryAfter {
				t.Fatalf("err = %v (%#v), want %s with Retry-After %s", err, ce, tc.class, tc.retryAfter)
			}
		})
	}

	t.Run("connection refused is transient, even for a create", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c, err := calendar.New(calendar.Config{URL: "http://" + addr + "/cal/"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), create)
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a 401 invalidates a bearer token once and retries with the fresh one", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var seen []string
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer fresh" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			if r.Method == "REPORT" {
				w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:"/>`))
				return
			}
			w.Write([]byte(propfind))
		}))
		t.Cleanup(ts.Close)
		acct := &account{kind: "oauth2", user: "me@gmail.com", secrets: []string{"expired", "fresh"}}
		c, err := calendar.New(calendar.Config{URL: ts.URL + "/cal/", Account: acct})
		if err != nil {
			t.Fatal(err)
		}
		// events discovers (PROPFIND) and then queries (REPORT): the REPORT
		// gets an empty multistatus, so the call succeeds with no events.
		got, err := c.Do(context.Background(), list)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if acct.invalidations() != 1 || len(seen) < 2 || seen[0] != "Bearer expired" || seen[1] != "Bearer fresh" {
			t.Fatalf("invalidations %d, authorizations %q, result %v", acct.invalidations(), seen, got)
		}
	})

	t.Run("without a url every call names the missing config key", func(t *testing.T) {
		t.Parallel()
		c, err := calendar.New(calendar.Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), list)
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "[connectors.calendar] url") {
			t.Fatalf("err = %v", err)
		}
	})
}

// failing412 is a server on which the event exists but changes under the
// connector: the conditional DELETE gets 412.
func failing412(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "PROPFIND":
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(propfind))
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/calendar")
			w.Header().Set("ETag", `"v1"`)
			w.Write([]byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTAMP:20261120T080000Z\r\n" +
				"DTSTART:20261123T100000Z\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
		case http.MethodDelete:
			if r.Header.Get("If-Match") != `"v1"` {
				t.Errorf("DELETE If-Match = %q", r.Header.Get("If-Match"))
			}
			w.WriteHeader(http.StatusPreconditionFailed)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/cal/"
}
