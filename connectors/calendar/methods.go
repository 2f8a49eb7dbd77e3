package calendar

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"

	"keep/connectors"
)

// events: {from, to} → the events overlapping [from, to).
func (c *Connector) events(ctx context.Context, p map[string]any) (any, error) {
	from, _, err := parseWhen(p, "from", true, c.loc)
	if err != nil {
		return nil, err
	}
	to, _, err := parseWhen(p, "to", true, c.loc)
	if err != nil {
		return nil, err
	}
	if !to.t.After(from.t) {
		return nil, connectors.Errorf(connectors.Logic, "to (%s) must be after from (%s)", to, from)
	}
	if to.t.Sub(from.t) > c.maxRange {
		return nil, connectors.Errorf(connectors.Logic, "from %s to %s is longer than the %d days allowed", from, to, int(c.maxRange.Hours()/24))
	}
	path, err := c.calendarPath(ctx)
	if err != nil {
		return nil, err
	}
	// The server reads an all-day event's dates, and floating times, on
	// a clock of its own (RFC 4791 §9.9: the calendar's zone, or UTC as
	// Radicale does), up to 26 hours off the person's (UTC-12 to UTC+14):
	// it is asked for two days more on each side, and expand keeps what
	// is in the range on the person's clock.
	objs, err := c.cal.QueryCalendar(ctx, path, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{{
			Name: ical.CompEvent, Start: from.t.AddDate(0, 0, -2).UTC(), End: to.t.AddDate(0, 0, 2).UTC(),
		}}},
	})
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			c.forget() // the calendar moved or went: find it again next time
		}
		return nil, classify(err, false)
	}
	out := []any{}
	b := newBudget(ctx)
	for _, obj := range objs {
		evs, err := expand(obj.Data, from.t, to.t, b, c.loc)
		var ce *connectors.Error
		if errors.As(err, &ce) { // the budget's: classified already
			return nil, err
		}
		if err != nil {
			return nil, connectors.Errorf(connectors.Logic, "calendar: %s: %w", obj.Path, err)
		}
		for _, ev := range evs {
			out = append(out, ev)
		}
	}
	sortEvents(out, c.loc)
	return out, nil
}

// event: {uid} → the event, or nil.
func (c *Connector) event(ctx context.Context, p map[string]any) (any, error) {
	uid, err := connectors.String(p, "uid", true)
	if err != nil {
		return nil, err
	}
	obj, err := c.find(ctx, uid)
	if err != nil || obj == nil {
		return nil, err
	}
	return masterMap(obj, uid, c.loc)
}

// found is an event object as it stands on the server.
type found struct {
	path, etag string
	cal        *ical.Calendar
}

// master returns the object's VEVENT that is not an override.
func (f *found) master(uid string) *ical.Event {
	for _, comp := range f.cal.Children {
		if comp.Name != ical.CompEvent || comp.Props.Get(ical.PropRecurrenceID) != nil {
			continue
		}
		if got, _ := comp.Props.Text(ical.PropUID); got == uid {
			return &ical.Event{Component: comp}
		}
	}
	return nil
}

func masterMap(f *found, uid string, loc *time.Location) (map[string]any, error) {
	ev := f.master(uid)
	if ev == nil {
		return nil, connectors.Errorf(connectors.Logic, "calendar: %s holds no main event %s", f.path, uid)
	}
	k := newClock(f.cal, loc)
	m, err := eventMap(ev, nil, k)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "calendar: %s: %w", f.path, err)
	}
	firstOccurrence(m, ev, f.cal, k)
	return m, nil
}

// firstOccurrence moves m, a series read from its DTSTART, to its first
// occurrence that events lists: DTSTART's own may be removed, by EXDATE
// or by an override cancelling it, or it and the following ones by a
// cancelled override of this and future occurrences. A series with none
// left, or whose rule can't be read or walked, stays at DTSTART: event
// reads it as before, and an update that was made is not reported as
// failed. The fields stay the series' own, as an update sets them, even
// where an override stands for that first occurrence.
func firstOccurrence(m map[string]any, ev *ical.Event, cal *ical.Calendar, k *clock) {
	o, err := readOverrides(cal, k)
	if err != nil {
		return
	}
	set, err := recurrenceSet(ev, k, o.cancelled)
	if err != nil || set == nil {
		return
	}
	uid, _ := ev.Props.Text(ical.PropUID)
	b := newBudget(context.Background())
	var first time.Time
	for next := set.Iterator(); ; {
		occ, ok := next()
		if !ok || b.step(uid) != nil {
			return
		}
		if _, own := o.one[occ.UTC().Format(time.RFC3339)]; own {
			first = occ
			break
		}
		gone, over := o.gone(occ)
		if over {
			return
		}
		if !gone {
			first = occ
			break
		}
	}
	l, err := k.length(ev)
	if err != nil {
		return
	}
	allDay := m["allDay"].(bool)
	m["start"] = when{t: first, allDay: allDay}.String()
	m["end"] = when{t: l.after(first), allDay: allDay}.String()
}

// find fetches the event with uid: first where keep would have put it, then
// by a query on UID (events made elsewhere live under other names). Absent
// is nil, nil.
func (c *Connector) find(ctx context.Context, uid string) (*found, error) {
	path, err := c.calendarPath(ctx)
	if err != nil {
		return nil, err
	}
	obj, err := c.cal.GetCalendarObject(ctx, objectPath(path, uid))
	switch {
	case err == nil:
		// The name is only where keep would have put it: another client
		// may keep another event there (or only one occurrence of this
		// one), and then the event is elsewhere or nowhere.
		if f := (&found{path: obj.Path, etag: obj.ETag, cal: obj.Data}); f.master(uid) != nil {
			return f, nil
		}
	case statusOf(err) != http.StatusNotFound:
		return nil, classify(err, false)
	}
	objs, err := c.cal.QueryCalendar(ctx, path, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{{
			Name: ical.CompEvent, Props: []caldav.PropFilter{{Name: ical.PropUID, TextMatch: &caldav.TextMatch{Text: uid}}},
		}}},
	})
	if err != nil {
		return nil, classify(err, false)
	}
	for _, obj := range objs {
		f := &found{path: obj.Path, etag: obj.ETag, cal: obj.Data}
		if f.master(uid) != nil {
			return f, nil
		}
	}
	return nil, nil
}

// create: {summary, start, end, location, description} → {uid}.
func (c *Connector) create(ctx context.Context, call connectors.Call) (any, error) {
	f, err := readFields(call.Params, c.loc)
	if err != nil {
		return nil, err
	}
	if f.summary == nil || *f.summary == "" {
		return nil, connectors.Errorf(connectors.Logic, "summary is required")
	}
	if f.start == nil {
		return nil, connectors.Errorf(connectors.Logic, "start is required")
	}
	if f.end == nil {
		end := when{t: f.start.t.Add(defaultLength), allDay: f.start.allDay}
		if end.allDay {
			end.t = f.start.t.AddDate(0, 0, 1)
		}
		f.end = &end
	}
	path, err := c.calendarPath(ctx)
	if err != nil {
		return nil, err
	}
	uid := uidFor(call.IdempotencyKey)
	ev := ical.NewEvent()
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, c.now().UTC())
	f.apply(ev)
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//keep//calendar//EN")
	cal.Children = append(cal.Children, ev.Component)
	body, err := encode(cal)
	if err != nil {
		return nil, err
	}
	_, err = c.send(ctx, http.MethodPut, objectPath(path, uid), http.Header{
		"Content-Type": {ical.MIMEType}, "If-None-Match": {"*"},
	}, body)
	if statusOf(err) == http.StatusPreconditionFailed {
		// The UID comes from this mutation's key: an event already under it
		// is this mutation's own, written by an earlier attempt.
		return map[string]any{"uid": uid}, nil
	}
	if err != nil {
		return nil, classify(err, true)
	}
	return map[string]any{"uid": uid}, nil
}

// update: {uid, ...fields} → the event as changed.
func (c *Connector) update(ctx context.Context, call connectors.Call) (any, error) {
	uid, err := connectors.String(call.Params, "uid", true)
	if err != nil {
		return nil, err
	}
	f, err := readFields(call.Params, c.loc)
	if err != nil {
		return nil, err
	}
	if f == (fields{}) {
		return nil, connectors.Errorf(connectors.Logic, "update needs at least one of summary, start, end, location, description")
	}
	if f.summary != nil && *f.summary == "" {
		return nil, connectors.Errorf(connectors.Logic, "summary may not be emptied")
	}
	obj, err := c.find(ctx, uid)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, connectors.Errorf(connectors.Logic, "the calendar has no event with uid %q", uid)
	}
	// before apply changes obj, which ifMatch compares with the server's
	header, err := c.ifMatch(ctx, obj, uid)
	if err != nil {
		return nil, err
	}
	header.Set("Content-Type", ical.MIMEType)
	ev := obj.master(uid)
	f.apply(ev)
	k := newClock(obj.cal, c.loc)
	s, err := k.start(ev)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "calendar: %s: the start of event %q can't be read: %w", obj.path, uid, err)
	}
	e, err := k.end(ev)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "calendar: %s: the end of event %q can't be read: %w", obj.path, uid, err)
	}
	if !e.After(s) {
		return nil, connectors.Errorf(connectors.Logic, "after the update the event would end (%s) before it starts (%s)", e.UTC().Format(time.RFC3339), s.UTC().Format(time.RFC3339))
	}
	seq := 0
	if p := ev.Props.Get(ical.PropSequence); p != nil {
		seq, _ = p.Int()
	}
	ev.Props.SetText(ical.PropSequence, strconv.Itoa(seq+1))
	ev.Props.Get(ical.PropSequence).SetValueType(ical.ValueInt)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, c.now().UTC())
	ev.Props.SetDateTime(ical.PropLastModified, c.now().UTC())
	body, err := encode(obj.cal)
	if err != nil {
		return nil, err
	}
	if _, err := c.send(ctx, http.MethodPut, obj.path, header, body); err != nil {
		return nil, classify(err, true)
	}
	return masterMap(obj, uid, c.loc)
}

// delete: {uid} → {uid, deleted}.
func (c *Connector) delete(ctx context.Context, call connectors.Call) (any, error) {
	uid, err := connectors.String(call.Params, "uid", true)
	if err != nil {
		return nil, err
	}
	obj, err := c.find(ctx, uid)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, connectors.Errorf(connectors.Logic, "the calendar has no event with uid %q", uid)
	}
	header, err := c.ifMatch(ctx, obj, uid)
	if err != nil {
		return nil, err
	}
	if _, err := c.send(ctx, http.MethodDelete, obj.path, header, nil); err != nil {
		return nil, classify(err, true)
	}
	return map[string]any{"uid": uid, "deleted": true}, nil
}

// quoteETag puts back the quotes go-webdav strips from an ETag.
func quoteETag(etag string) string { return strconv.Quote(etag) }
