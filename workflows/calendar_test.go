package workflows

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/calendar"
	"keep/connectors/calendar/radicaletest"
	"keep/connectors/system"
	"keep/engine/api"
	"keep/engine/config"
)

// passwordAccount is the account the accounts helper would hand out for a
// Radicale user.
type passwordAccount struct{ user, password string }

func (a passwordAccount) Name() string                           { return "radicale" }
func (a passwordAccount) Kind() string                           { return "password" }
func (a passwordAccount) Username() string                       { return a.user }
func (a passwordAccount) Secret(context.Context) (string, error) { return a.password, nil }
func (a passwordAccount) Invalidate()                            {}

func TestMeetingReminders(t *testing.T) {
	t.Parallel()
	rad := radicaletest.Start(t)
	put := func(name, ics string) { rad.Do(t, "PUT", rad.Calendar+name+".ics", ics, http.StatusCreated) }
	// the host's clock starts at 2026-11-02 09:00 UTC
	put("review", radicaletest.Event("review-1", "Design review", ":20261102T091000Z", ":20261102T100000Z", "LOCATION:Room 1"))
	put("later", radicaletest.Event("later-1", "1:1 with Sam", ":20261102T100000Z", ":20261102T103000Z"))
	put("running", radicaletest.Event("running-1", "Already started", ":20261102T083000Z", ":20261102T093000Z"))
	put("holiday", radicaletest.Event("holiday-1", "Company holiday", ";VALUE=DATE:20261102", ";VALUE=DATE:20261103"))
	put("standup", radicaletest.Event("standup-1", "Standup", ":20261102T091500Z", ":20261102T093000Z", "RRULE:FREQ=DAILY;COUNT=2"))

	var n notifications
	h := newHost(t, hostOpt{edit: allowAll, registry: func(cfg config.Config, c *clock) *connectors.Registry {
		reg := connectors.NewRegistry()
		cc, err := calendar.New(calendar.Config{URL: rad.Base, Account: passwordAccount{rad.User, rad.Password}, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		reg.Register(cc)
		sys, err := system.New(system.Config{Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		reg.Register(sys)
		n.register(t, reg)
		return reg
	}})
	notified := n.list

	h.Deploy("meeting-reminders.js", source(t, "meeting-reminders.js"))
	h.Drain()
	h.Healthy("meeting-reminders")
	want := []string{"Design review at 09:10 UTC | in Room 1", "Standup at 09:15 UTC | starts soon"}
	if got := notified(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("first look:\n got %q\nwant %q\ninputs %q", got, want, titles(h.Inputs("meeting-reminders")))
	}

	// the next polls see the same meetings again and remind of nothing new
	h.Clock.Advance(5 * time.Minute)
	h.Drain()
	if got := notified(); len(got) != 2 {
		t.Fatalf("after a second look: %q", got)
	}

	// 09:45: the 10:00 meeting is within the lead time
	h.Clock.Advance(40 * time.Minute)
	h.Drain()
	want = append(want, "1:1 with Sam at 10:00 UTC | starts soon")
	if got := notified(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("at 09:45:\n got %q\nwant %q", got, want)
	}

	// the next day's standup is its own occurrence
	h.Clock.Advance(23*time.Hour + 25*time.Minute) // 09:10 the next day
	h.Drain()
	want = append(want, "Standup at 09:15 UTC | starts soon")
	if got := notified(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the next day:\n got %q\nwant %q", got, want)
	}

	ins := h.Inputs("meeting-reminders")
	if len(ins) != 4 {
		t.Fatalf("inputs %q", titles(ins))
	}
	for _, in := range ins {
		if in.Source != "calendar" || in.Type != "event" || in.Status != api.InputDone || len(in.Outputs) != 1 ||
			!strings.HasPrefix(in.Title, "Meeting \"") {
			t.Errorf("input %q: %s/%s %s %+v", in.Title, in.Source, in.Type, in.Status, in.Outputs)
		}
	}
}
