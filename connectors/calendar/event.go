package calendar

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	_ "time/tzdata" // events name IANA zones; don't depend on the host's zoneinfo

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"keep/connectors"
)

// dateLayout is how all-day events' dates are written to and read from
// scripts; timed ones use RFC 3339.
const dateLayout = "2006-01-02"

// when is an event boundary as scripts give it: a moment, or a whole day.
type when struct {
	t      time.Time
	allDay bool
}

// parseWhen reads an RFC 3339 time ("2026-11-23T10:00:00+01:00") or a date
// ("2026-11-23", an all-day boundary) on loc.
func parseWhen(params map[string]any, name string, required bool, loc *time.Location) (when, bool, error) {
	s, err := connectors.String(params, name, required)
	if err != nil || s == "" {
		return when{}, false, err
	}
	w, err := parseBoundary(s, loc)
	if err != nil {
		return when{}, false, connectors.Errorf(connectors.Logic,
			"%s %q is neither a date (2026-11-23) nor an RFC 3339 time (2026-11-23T10:00:00+01:00)", name, s)
	}
	return w, true, nil
}

// parseBoundary reads a time as scripts give it and as events lists it.
// A date is the moment its day starts on loc, the person's clock: RFC
// 5545 reads a date (§3.3.4), like a floating time, where its reader is,
// so the 29th of someone in Berlin starts at 23:00 UTC on the 28th, and
// an all-day event on the 28th is over by then.
func parseBoundary(s string, loc *time.Location) (when, error) {
	if d, err := time.ParseInLocation(dateLayout, s, loc); err == nil {
		return when{t: d, allDay: true}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	return when{t: t}, err
}

func (w when) String() string {
	if w.allDay {
		return w.t.Format(dateLayout)
	}
	return w.t.UTC().Format(time.RFC3339)
}

// fields are the parts of an event a script may set.
type fields struct {
	summary, location, description *string
	start, end                     *when
}

var textFields = []struct {
	name, prop string
}{
	{"summary", ical.PropSummary},
	{"location", ical.PropLocation},
	{"description", ical.PropDescription},
}

// readFields reads the settable fields present in params, dates on loc.
func readFields(params map[string]any, loc *time.Location) (fields, error) {
	var f fields
	for _, tf := range textFields {
		if _, ok := params[tf.name]; !ok {
			continue
		}
		s, err := connectors.String(params, tf.name, false)
		if err != nil {
			return f, err
		}
		switch tf.name {
		case "summary":
			f.summary = &s
		case "location":
			f.location = &s
		case "description":
			f.description = &s
		}
	}
	for _, name := range []string{"start", "end"} {
		w, ok, err := parseWhen(params, name, false, loc)
		if err != nil {
			return f, err
		}
		if ok && name == "start" {
			f.start = &w
		} else if ok {
			f.end = &w
		}
	}
	if f.start != nil && f.end != nil {
		if f.start.allDay != f.end.allDay {
			return f, connectors.Errorf(connectors.Logic, "start and end must both be dates or both be times")
		}
		if !f.end.t.After(f.start.t) {
			return f, connectors.Errorf(connectors.Logic, "end (%s) must be after start (%s)", f.end, f.start)
		}
	}
	return f, nil
}

func (f fields) text(name string) *string {
	switch name {
	case "summary":
		return f.summary
	case "location":
		return f.location
	}
	return f.description
}

// apply writes f into ev.
func (f fields) apply(ev *ical.Event) {
	for _, tf := range textFields {
		if v := f.text(tf.name); v != nil {
			if *v == "" {
				ev.Props.Del(tf.prop)
			} else {
				ev.Props.SetText(tf.prop, *v)
			}
		}
	}
	if f.start != nil {
		setWhen(ev, ical.PropDateTimeStart, *f.start)
	}
	if f.end != nil {
		ev.Props.Del(ical.PropDuration)
		setWhen(ev, ical.PropDateTimeEnd, *f.end)
	}
}

func setWhen(ev *ical.Event, prop string, w when) {
	ev.Props.Del(prop)
	if w.allDay {
		ev.Props.SetDate(prop, w.t)
	} else {
		ev.Props.SetDateTime(prop, w.t.UTC())
	}
}

// differences lists the fields of f that ev does not hold, for reconciling
// an update: empty means the update is in place.
func (f fields) differences(ev map[string]any) []string {
	var diff []string
	for _, tf := range textFields {
		if v := f.text(tf.name); v != nil && ev[tf.name] != *v {
			diff = append(diff, tf.name)
		}
	}
	if f.start != nil && ev["start"] != f.start.String() {
		diff = append(diff, "start")
	}
	if f.end != nil && ev["end"] != f.end.String() {
		diff = append(diff, "end")
	}
	return diff
}

// eventMap is one VEVENT as scripts see it. For an occurrence of a
// recurring event, start and end are the occurrence's and recurrenceId
// names it; uid is shared by all occurrences.
func eventMap(ev *ical.Event, start *time.Time, k *clock) (map[string]any, error) {
	uid, _ := ev.Props.Text(ical.PropUID)
	m := map[string]any{"uid": uid}
	for _, tf := range textFields {
		v, _ := ev.Props.Text(tf.prop)
		m[tf.name] = v
	}
	sp := ev.Props.Get(ical.PropDateTimeStart)
	if sp == nil {
		return nil, fmt.Errorf("event %s has no DTSTART", uid)
	}
	allDay := isDate(sp)
	s, err := k.start(ev)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", uid, err)
	}
	l, err := k.length(ev)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", uid, err)
	}
	if start != nil {
		s = *start
		m["recurrenceId"] = when{t: s, allDay: allDay}.String()
	}
	e := l.after(s)
	m["start"] = when{t: s, allDay: allDay}.String()
	m["end"] = when{t: e, allDay: allDay}.String()
	m["allDay"] = allDay
	if rr := ev.Props.Get(ical.PropRecurrenceRule); rr != nil && start == nil {
		m["recurrence"] = rr.Value
	}
	return m, nil
}

// Bounds of one listing's expansion of recurring events. A rule can
// repeat every second from 1970 (one line in any calendar, an invitation
// included): rrule walks every occurrence from DTSTART, so without a bound
// a listing takes the CPU for hours, past its own deadline, or fills
// memory with occurrences.
const (
	// maxSteps is how many occurrences one listing may walk through,
	// before the range included: some 0.2 s. An hourly event from 1990
	// fits; a rule every minute for years does not.
	maxSteps = 1 << 21
	// maxEvents is how many events one listing may return: more than a
	// year of a full calendar, fewer than fit one result (DESIGN §8).
	maxEvents = 20000
	// checkEvery is how often, in steps, the walk looks at its deadline.
	checkEvery = 1 << 12
)

// budget is what is left of one listing's bounds.
type budget struct {
	ctx           context.Context
	steps, events int
}

func newBudget(ctx context.Context) *budget {
	return &budget{ctx: ctx, steps: maxSteps, events: maxEvents}
}

// step counts one occurrence walked through for uid.
func (b *budget) step(uid string) error {
	if b.steps--; b.steps < 0 {
		return connectors.Errorf(connectors.Logic,
			"calendar: the event %q repeats too often to list: more than %d occurrences to walk through; list a range where it does not, or change its rule", uid, maxSteps)
	}
	if b.steps%checkEvery == 0 {
		if err := b.ctx.Err(); err != nil {
			return connectors.Errorf(connectors.Transient, "calendar: listing the occurrences of %q: %w", uid, err)
		}
	}
	return nil
}

// add counts one event listed.
func (b *budget) add() error {
	if b.events--; b.events < 0 {
		return connectors.Errorf(connectors.Logic,
			"calendar: more than %d events in the range; list a shorter one", maxEvents)
	}
	return nil
}

// expand lists the events of one calendar object that overlap [from, to):
// single events as they are, recurring ones as one entry per occurrence,
// with the object's overrides (RECURRENCE-ID) in place of the occurrences
// they replace, within what is left of b.
func expand(cal *ical.Calendar, from, to time.Time, b *budget, loc *time.Location) ([]map[string]any, error) {
	k := newClock(cal, loc)
	o, err := readOverrides(cal, k)
	if err != nil {
		return nil, err
	}
	var masters []ical.Event
	for _, ev := range cal.Events() {
		if ev.Props.Get(ical.PropRecurrenceID) == nil {
			masters = append(masters, ev)
		}
	}
	var out []map[string]any
	overlaps := func(m map[string]any) bool {
		s, _ := parseBoundary(m["start"].(string), loc)
		e, _ := parseBoundary(m["end"].(string), loc)
		return s.t.Before(to) && (e.t.After(from) || (e.t.Equal(s.t) && !s.t.Before(from)))
	}
	for _, ev := range masters {
		set, err := recurrenceSet(&ev, k, o.cancelled)
		if err != nil {
			return nil, err
		}
		if set == nil {
			m, err := eventMap(&ev, nil, k)
			if err != nil {
				return nil, err
			}
			if overlaps(m) {
				if err := b.add(); err != nil {
					return nil, err
				}
				out = append(out, m)
			}
			continue
		}
		l, err := k.length(&ev)
		if err != nil {
			return nil, err
		}
		// an occurrence starting before from may still be running at from,
		// and one moved by a range override may start in it from either side
		ahead, behind := o.reach(l.most())
		lo, hi := from.Add(-ahead), to.Add(behind)
		uid, _ := ev.Props.Text(ical.PropUID)
		for next := set.Iterator(); ; {
			occ, ok := next()
			if !ok || occ.After(hi) {
				break
			}
			if err := b.step(uid); err != nil {
				return nil, err
			}
			if occ.Before(lo) {
				continue
			}
			key := occ.UTC().Format(time.RFC3339)
			var m map[string]any
			if ov, ok := o.one[key]; ok {
				delete(o.one, key)
				m, err = eventMap(&ov, nil, k)
				if m != nil {
					m["recurrenceId"] = when{t: occ, allDay: m["allDay"].(bool)}.String()
				}
			} else if i := o.covering(occ); i >= 0 {
				r := &o.ranges[i]
				if r.cancelled {
					continue
				}
				start := r.move(occ)
				m, err = eventMap(&r.ev, &start, k)
				if m != nil {
					m["recurrenceId"] = when{t: occ, allDay: m["allDay"].(bool)}.String()
				}
			} else {
				occ := occ
				m, err = eventMap(&ev, &occ, k)
			}
			if err != nil {
				return nil, err
			}
			if overlaps(m) {
				if err := b.add(); err != nil {
					return nil, err
				}
				out = append(out, m)
			}
		}
	}
	// overrides moved into the range from an occurrence outside it
	for key, ov := range o.one {
		m, err := eventMap(&ov, nil, k)
		if err != nil {
			return nil, err
		}
		// the key is the moment, as a date is one on the person's
		// clock; listed as the other occurrences' are
		rid, _ := time.Parse(time.RFC3339, key)
		m["recurrenceId"] = when{t: rid.In(k.loc), allDay: m["allDay"].(bool)}.String()
		if overlaps(m) {
			if err := b.add(); err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// isCancelled says whether ev is STATUS:CANCELLED. An override (one
// occurrence, RECURRENCE-ID) so marked is how Outlook, Google and Apple
// cancel one occurrence of a series: it is gone, as if by EXDATE.
func isCancelled(ev *ical.Event) bool {
	s, _ := ev.Props.Text(ical.PropStatus)
	return strings.EqualFold(strings.TrimSpace(s), string(ical.EventCancelled))
}

// recurrenceSet is ev's occurrences: DTSTART, RRULE, every RDATE and
// every EXDATE, each of the last two possibly a comma-separated list (RFC
// 5545 §3.8.5), less the cancelled ones; nil for a single event. go-ical's
// own reads no RDATE at all and fails on a list.
func recurrenceSet(ev *ical.Event, k *clock, cancelled []time.Time) (*rrule.Set, error) {
	opt, err := ev.Props.RecurrenceRule()
	if err != nil {
		return nil, fmt.Errorf("recurrence rule: %w", err)
	}
	if opt == nil && len(ev.Props[ical.PropRecurrenceDates]) == 0 {
		return nil, nil
	}
	start, err := k.start(ev)
	if err != nil {
		return nil, err
	}
	set := &rrule.Set{}
	set.DTStart(start)
	if opt != nil {
		rule, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil, fmt.Errorf("recurrence rule: %w", err)
		}
		set.RRule(rule)
	}
	// DTSTART is the first occurrence (RFC 5545 §3.8.5.3), rule or none;
	// the set lists a time given twice once.
	set.RDate(start)
	for _, name := range []string{ical.PropRecurrenceDates, ical.PropExceptionDates} {
		for _, prop := range ev.Props[name] {
			for _, v := range strings.Split(prop.Value, ",") {
				// a PERIOD (start/end or start/duration) starts at start
				v, _, _ = strings.Cut(strings.TrimSpace(v), "/")
				one := ical.Prop{Name: prop.Name, Params: maps.Clone(prop.Params), Value: v}
				if one.ValueType() == ical.ValuePeriod {
					one.SetValueType(ical.ValueDateTime)
				}
				t, err := k.at(&one)
				if err != nil {
					return nil, fmt.Errorf("%s %q: %w", name, v, err)
				}
				if name == ical.PropRecurrenceDates {
					set.RDate(t)
				} else {
					set.ExDate(t)
				}
			}
		}
	}
	for _, t := range cancelled {
		set.ExDate(t)
	}
	return set, nil
}

// sortEvents orders events by start, then uid, so a listing is stable;
// an all-day event starts when its day does on loc.
func sortEvents(evs []any, loc *time.Location) {
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i].(map[string]any), evs[j].(map[string]any)
		sa, _ := parseBoundary(a["start"].(string), loc)
		sb, _ := parseBoundary(b["start"].(string), loc)
		if !sa.t.Equal(sb.t) {
			return sa.t.Before(sb.t)
		}
		return strings.Compare(a["uid"].(string), b["uid"].(string)) < 0
	})
}
