package calendar_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// etagless is a CalDAV server that gives no ETag on a read: none on a
// GET, no getetag in a REPORT, unless etagOnGet is set for a path. It
// holds objects by path and records the writes it was sent.
type etagless struct {
	mu      sync.Mutex
	objects map[string]string // path → iCalendar text
	// etagOnGet is the ETag a GET of a path answers with, if any.
	etagOnGet map[string]string
	// afterGet, if set, runs after every GET of an object, with how many
	// GETs of it there have been: another client's change lands there.
	afterGet func(path string, n int)
	gets     map[string]int
	writes   []string // "PUT /cal/u.ics If-Match=…"
}

func newETagless(t *testing.T) (*etagless, string) {
	t.Helper()
	s := &etagless{objects: map[string]string{}, etagOnGet: map[string]string{}, gets: map[string]int{}}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(ts.Close)
	return s, ts.URL + "/cal/"
}

func (s *etagless) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case "PROPFIND":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		w.Write([]byte(propfind))
	case "REPORT":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		body := `<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">`
		for path, ics := range s.objects {
			body += `<D:response><D:href>` + path + `</D:href><D:propstat><D:prop><C:calendar-data>` + ics +
				`</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`
		}
		w.Write([]byte(body + `</D:multistatus>`))
	case http.MethodGet:
		ics, ok := s.objects[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		if etag := s.etagOnGet[r.URL.Path]; etag != "" {
			w.Header().Set("ETag", etag)
		}
		w.Write([]byte(ics))
		s.gets[r.URL.Path]++
		if s.afterGet != nil {
			s.afterGet(r.URL.Path, s.gets[r.URL.Path])
		}
	case http.MethodPut, http.MethodDelete:
		s.writes = append(s.writes, r.Method+" "+r.URL.Path+" If-Match="+r.Header.Get("If-Match"))
		if r.Method == http.MethodDelete {
			delete(s.objects, r.URL.Path)
		} else {
			b, _ := io.ReadAll(r.Body)
			s.objects[r.URL.Path] = string(b)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *etagless) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// TestWithoutAnETagAChangeOnTheServerIsNotOverwritten: update and delete
// guard their write with If-Match, so a change another client made after
// keep read the event is not lost. A server that gives no ETag leaves
// nothing to guard with: the connector reads the event again, and if it
// is no longer what it read, it refuses, writing nothing; if the second
// read does give an ETag, the write is conditional on it.
func TestWithoutAnETagAChangeOnTheServerIsNotOverwritten(t *testing.T) {
	t.Parallel()
	original := radicaletest.Event("u", "Planning", ":20261124T100000Z", ":20261124T110000Z")
	verb := map[string]string{"update": "PUT", "delete": "DELETE"}
	changed := strings.Replace(original, "SUMMARY:Planning", "SUMMARY:Planning (moved to Friday)", 1)
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"an update", "update", map[string]any{"uid": "u", "location": "Room 2"}},
		{"a delete", "delete", map[string]any{"uid": "u"}},
	} {
		t.Run(tc.name+" of an event changed since it was read is refused, with nothing written", func(t *testing.T) {
			t.Parallel()
			s, url := newETagless(t)
			s.objects["/cal/u.ics"] = original
			s.afterGet = func(path string, n int) {
				if n == 1 {
					s.objects[path] = changed
				}
			}
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), connectors.Call{Method: tc.method, Params: tc.params, IdempotencyKey: "k"})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "changed") || !strings.Contains(err.Error(), `"u"`) {
				t.Fatalf("err = %v, want a logic failure saying the event u changed", err)
			}
			if w := s.sent(); len(w) != 0 {
				t.Fatalf("the server was sent %q over another client's change", w)
			}
		})

		t.Run(tc.name+" of an event deleted since it was read is refused, with nothing written", func(t *testing.T) {
			t.Parallel()
			s, url := newETagless(t)
			s.objects["/cal/u.ics"] = original
			s.afterGet = func(path string, n int) { delete(s.objects, path) }
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(context.Background(), connectors.Call{Method: tc.method, Params: tc.params, IdempotencyKey: "k"})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "deleted") {
				t.Fatalf("err = %v, want a logic failure saying the event was deleted", err)
			}
			if w := s.sent(); len(w) != 0 {
				t.Fatalf("the server was sent %q", w)
			}
		})

		t.Run(tc.name+" of an event nobody changed goes through", func(t *testing.T) {
			t.Parallel()
			s, url := newETagless(t)
			s.objects["/cal/u.ics"] = original
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			do(t, c, tc.method, "k", tc.params)
			want := verb[tc.method] + " /cal/u.ics If-Match="
			if w := s.sent(); len(w) != 1 || w[0] != want {
				t.Fatalf("writes %q, want %q", w, want)
			}
		})

		t.Run(tc.name+" is conditional on the ETag a second read gives", func(t *testing.T) {
			t.Parallel()
			s, url := newETagless(t)
			// made by another client under its own name: found by a REPORT
			// that carries no getetag; a GET of it does give one
			s.objects["/cal/other-name.ics"] = original
			s.etagOnGet["/cal/other-name.ics"] = `"v7"`
			c, err := calendar.New(calendar.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			do(t, c, tc.method, "k", tc.params)
			want := verb[tc.method] + ` /cal/other-name.ics If-Match="v7"`
			if w := s.sent(); len(w) != 1 || w[0] != want {
				t.Fatalf("writes %q, want %q", w, want)
			}
		})
	}
}
