package calendar_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
)

// account is a connectors.Account at the machine's edge: a password that
// may be wrong until the connector invalidates it once.
type account struct {
	kind, user string
	mu         sync.Mutex
	secrets    []string // handed out in turn; each Invalidate moves on
	invalid    int
}

func (a *account) Name() string     { return "test" }
func (a *account) Kind() string     { return a.kind }
func (a *account) Username() string { return a.user }

func (a *account) Secret(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := min(a.invalid, len(a.secrets)-1)
	return a.secrets[i], nil
}

func (a *account) Invalidate() {
	a.mu.Lock()
	a.invalid++
	a.mu.Unlock()
}

func (a *account) invalidations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.invalid
}

type radicale struct{ *radicaletest.Server }

func startRadicale(t *testing.T) *radicale { return &radicale{radicaletest.Start(t)} }

func (r *radicale) do(t *testing.T, method, path, body string, want int) {
	r.Do(t, method, path, body, want)
}

func (r *radicale) connector(t *testing.T, cfg calendar.Config) *calendar.Connector {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = r.Base
	}
	if cfg.Account == nil {
		cfg.Account = &account{kind: "password", user: r.User, secrets: []string{r.Password}}
	}
	c, err := calendar.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func do(t *testing.T, c *calendar.Connector, method, key string, params map[string]any) any {
	t.Helper()
	got, err := c.Do(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: key})
	if err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	return got
}

func reconcile(t *testing.T, c *calendar.Connector, method, key string, params map[string]any) (connectors.Verdict, any) {
	t.Helper()
	v, res, err := c.Reconcile(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: key})
	if err != nil {
		t.Fatalf("reconcile %s: %v", method, err)
	}
	return v, res
}

func TestRadicale(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	c := r.connector(t, calendar.Config{})
	day := map[string]any{"from": "2026-11-23T00:00:00Z", "to": "2026-11-24T00:00:00Z"}
	meeting := map[string]any{"summary": "Design review", "start": "2026-11-23T10:00:00+01:00",
		"end": "2026-11-23T11:00:00+01:00", "location": "Room 1", "description": "Agenda: §14"}
	var uid string

	t.Run("create writes an event under a UID derived from the key, once however often it runs", func(t *testing.T) {
		got := do(t, c, "create", "m-1", meeting).(map[string]any)
		uid = got["uid"].(string)
		if !strings.HasPrefix(uid, "keep-") {
			t.Fatalf("uid %q", uid)
		}
		again := do(t, c, "create", "m-1", meeting).(map[string]any)
		if again["uid"] != uid {
			t.Fatalf("the retry made uid %v, want %s", again["uid"], uid)
		}
		evs := do(t, c, "events", "", day).([]any)
		if len(evs) != 1 {
			t.Fatalf("events after two attempts of one create: %v", evs)
		}
		want := map[string]any{"uid": uid, "summary": "Design review", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z",
			"allDay": false, "location": "Room 1", "description": "Agenda: §14"}
		if fmt.Sprint(evs[0]) != fmt.Sprint(want) {
			t.Fatalf("event\n got %v\nwant %v", evs[0], want)
		}
		if ev := do(t, c, "event", "", map[string]any{"uid": uid}); fmt.Sprint(ev) != fmt.Sprint(want) {
			t.Fatalf("event by uid: %v", ev)
		}
	})

	t.Run("reconciling a create finds its UID, or its absence", func(t *testing.T) {
		if v, res := reconcile(t, c, "create", "m-1", meeting); v != connectors.Applied || res.(map[string]any)["uid"] != uid {
			t.Fatalf("applied create: %s %v", v, res)
		}
		if v, _ := reconcile(t, c, "create", "never-sent", meeting); v != connectors.NotApplied {
			t.Fatalf("a create never sent reconciles as %s", v)
		}
	})

	t.Run("update changes the given fields and reconciles by comparing them", func(t *testing.T) {
		change := map[string]any{"uid": uid, "location": "Room 2", "end": "2026-11-23T11:30:00+01:00"}
		got := do(t, c, "update", "m-2", change).(map[string]any)
		if got["location"] != "Room 2" || got["end"] != "2026-11-23T10:30:00Z" || got["summary"] != "Design review" {
			t.Fatalf("updated event %v", got)
		}
		if v, _ := reconcile(t, c, "update", "m-2", change); v != connectors.Applied {
			t.Fatalf("an applied update reconciles as %s", v)
		}
		if v, _ := reconcile(t, c, "update", "m-3", map[string]any{"uid": uid, "location": "Room 3"}); v != connectors.NotApplied {
			t.Fatalf("an update not made reconciles as %s", v)
		}
	})

	t.Run("an event made by another client is found by UID and listed", func(t *testing.T) {
		r.do(t, "PUT", r.Calendar+"other-name.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Apple Inc.//iCal//EN\r\n"+
			"BEGIN:VEVENT\r\nUID:ABC-123@example.com\r\nDTSTAMP:20261120T080000Z\r\nDTSTART;VALUE=DATE:20261123\r\nDTEND;VALUE=DATE:20261124\r\n"+
			"SUMMARY:Holiday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", http.StatusCreated)
		ev := do(t, c, "event", "", map[string]any{"uid": "ABC-123@example.com"}).(map[string]any)
		if ev["summary"] != "Holiday" || ev["start"] != "2026-11-23" || ev["end"] != "2026-11-24" || ev["allDay"] != true {
			t.Fatalf("event %v", ev)
		}
		evs := do(t, c, "events", "", day).([]any)
		if len(evs) != 2 || evs[0].(map[string]any)["uid"] != "ABC-123@example.com" {
			t.Fatalf("events %v", evs)
		}
		if got := do(t, c, "event", "", map[string]any{"uid": "no-such-uid"}); got != nil {
			t.Fatalf("an unknown uid gave %v, want null", got)
		}
	})

	t.Run("a recurring event is listed once per occurrence, with its override", func(t *testing.T) {
		r.do(t, "PUT", r.Calendar+"standup.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Fastmail//EN\r\n"+
			"BEGIN:VEVENT\r\nUID:standup\r\nDTSTAMP:20261120T080000Z\r\nDTSTART:20261124T083000Z\r\nDTEND:20261124T084500Z\r\n"+
			"RRULE:FREQ=DAILY;COUNT=3\r\nSUMMARY:Standup\r\nEND:VEVENT\r\n"+
			"BEGIN:VEVENT\r\nUID:standup\r\nDTSTAMP:20261120T080000Z\r\nRECURRENCE-ID:20261125T083000Z\r\nDTSTART:20261125T090000Z\r\nDTEND:20261125T091500Z\r\n"+
			"SUMMARY:Standup (late)\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", http.StatusCreated)
		evs := do(t, c, "events", "", map[string]any{"from": "2026-11-24", "to": "2026-11-30"}).([]any)
		var got []string
		for _, e := range evs {
			m := e.(map[string]any)
			got = append(got, fmt.Sprintf("%s %s %s", m["summary"], m["start"], m["recurrenceId"]))
		}
		want := []string{
			"Standup 2026-11-24T08:30:00Z 2026-11-24T08:30:00Z",
			"Standup (late) 2026-11-25T09:00:00Z 2026-11-25T08:30:00Z",
			"Standup 2026-11-26T08:30:00Z 2026-11-26T08:30:00Z",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("occurrences\n got %q\nwant %q", got, want)
		}
	})

	t.Run("times in named zones are read in them, a Windows zone by the VTIMEZONE the object carries", func(t *testing.T) {
		r.do(t, "PUT", r.Calendar+"berlin.ics", radicaletest.Event("berlin-1", "Call with Berlin",
			";TZID=Europe/Berlin:20261201T100000", ";TZID=Europe/Berlin:20261201T110000"), http.StatusCreated)
		r.do(t, "PUT", r.Calendar+"outlook.ics", strings.Replace(radicaletest.Event("outlook-1", "Outlook invite",
			";TZID=W. Europe Standard Time:20261201T120000", ";TZID=W. Europe Standard Time:20261201T130000"),
			"BEGIN:VEVENT", "BEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T030000\r\n"+
				"TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VEVENT", 1), http.StatusCreated)
		evs := do(t, c, "events", "", map[string]any{"from": "2026-12-01", "to": "2026-12-02"}).([]any)
		var got []string
		for _, e := range evs {
			m := e.(map[string]any)
			got = append(got, fmt.Sprintf("%s %s-%s", m["summary"], m["start"], m["end"]))
		}
		want := "Call with Berlin 2026-12-01T09:00:00Z-2026-12-01T10:00:00Z\nOutlook invite 2026-12-01T11:00:00Z-2026-12-01T12:00:00Z"
		if strings.Join(got, "\n") != want {
			t.Fatalf("events\n got %q\nwant %q", got, want)
		}
	})

	t.Run("delete removes the event and reconciles by its absence", func(t *testing.T) {
		if v, _ := reconcile(t, c, "delete", "m-4", map[string]any{"uid": uid}); v != connectors.NotApplied {
			t.Fatalf("a delete not made reconciles as %s", v)
		}
		do(t, c, "delete", "m-4", map[string]any{"uid": uid})
		if v, _ := reconcile(t, c, "delete", "m-4", map[string]any{"uid": uid}); v != connectors.Applied {
			t.Fatalf("an applied delete reconciles as %s", v)
		}
		if got := do(t, c, "event", "", map[string]any{"uid": uid}); got != nil {
			t.Fatalf("deleted event still there: %v", got)
		}
		_, err := c.Do(context.Background(), connectors.Call{Method: "delete", Params: map[string]any{"uid": uid}, IdempotencyKey: "m-5"})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("deleting a missing event: %v", err)
		}
	})

	t.Run("the calendar is found by name from the server root, and an unknown name is a logic failure", func(t *testing.T) {
		named := r.connector(t, calendar.Config{Calendar: "Work"})
		if evs := do(t, named, "events", "", day).([]any); len(evs) != 1 {
			t.Fatalf("events through the named calendar: %v", evs)
		}
		direct := r.connector(t, calendar.Config{URL: strings.TrimSuffix(r.Base, "/") + r.Calendar})
		if evs := do(t, direct, "events", "", day).([]any); len(evs) != 1 {
			t.Fatalf("events through the calendar's own URL: %v", evs)
		}
		wrong := r.connector(t, calendar.Config{Calendar: "Home"})
		_, err := wrong.Do(context.Background(), connectors.Call{Method: "events", Params: day})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), `no calendar "Home"`) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a stale password is invalidated once and the fresh one used", func(t *testing.T) {
		acct := &account{kind: "password", user: r.User, secrets: []string{"stale", r.Password}}
		c := r.connector(t, calendar.Config{Account: acct})
		do(t, c, "events", "", day)
		if acct.invalidations() != 1 {
			t.Fatalf("%d invalidations, want 1", acct.invalidations())
		}
	})

	t.Run("a refused password is an auth failure", func(t *testing.T) {
		acct := &account{kind: "password", user: r.User, secrets: []string{"wrong"}}
		c := r.connector(t, calendar.Config{Account: acct})
		_, err := c.Do(context.Background(), connectors.Call{Method: "create", Params: meeting, IdempotencyKey: "m-6"})
		if connectors.ClassOf(err) != connectors.Auth {
			t.Fatalf("err = %v, want auth", err)
		}
	})
}
