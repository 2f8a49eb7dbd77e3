package calendar

import (
	"maps"
	"time"

	"github.com/emersion/go-ical"
)

// clock reads the date-times of one calendar object. go-ical reads a
// TZID only as an IANA name, and fails on any other; Outlook and Exchange
// write Windows names ("W. Europe Standard Time") and any client may name
// a zone of its own, with the object's VTIMEZONE saying what the name
// means. The clock reads a zone Go knows from Go's database, any other by
// that VTIMEZONE, and one without either as UTC, so that one invitation
// can't fail the listing of a whole calendar. Floating times and dates
// are on loc, the person's own clock.
type clock struct {
	cal   *ical.Calendar
	loc   *time.Location
	zones map[string]*time.Location // by TZID, found on first use
}

func newClock(cal *ical.Calendar, loc *time.Location) *clock {
	return &clock{cal: cal, loc: loc, zones: map[string]*time.Location{}}
}

// zone is where a date-time with TZID tzid is read.
func (k *clock) zone(tzid string) *time.Location {
	if z, ok := k.zones[tzid]; ok {
		return z
	}
	z, err := time.LoadLocation(tzid)
	if err != nil {
		if z = vtimezone(k.cal, tzid); z == nil {
			// They are not made floating, which would read them on the
			// clock of whichever machine keep runs on.
			z = time.UTC
		}
	}
	k.zones[tzid] = z
	return z
}

// at reads prop (DTSTART, DTEND, RECURRENCE-ID, one value of RDATE or
// EXDATE) as a moment.
func (k *clock) at(prop *ical.Prop) (time.Time, error) {
	tzid := prop.Params.Get(ical.ParamTimezoneID)
	if tzid == "" {
		return prop.DateTime(k.loc)
	}
	one := *prop
	one.Params = maps.Clone(prop.Params)
	one.Params.Del(ical.ParamTimezoneID)
	if isDate(prop) {
		// a day is the person's, whatever zone its writer named
		return one.DateTime(k.loc)
	}
	return one.DateTime(k.zone(tzid))
}

func isDate(prop *ical.Prop) bool {
	return prop.ValueType() == ical.ValueDate || len(prop.Value) == len("20060102")
}

// start is ev's DTSTART; the zero time if it has none.
func (k *clock) start(ev *ical.Event) (time.Time, error) {
	if p := ev.Props.Get(ical.PropDateTimeStart); p != nil {
		return k.at(p)
	}
	return time.Time{}, nil
}

// end is ev's DTEND, else its start and length.
func (k *clock) end(ev *ical.Event) (time.Time, error) {
	if p := ev.Props.Get(ical.PropDateTimeEnd); p != nil {
		return k.at(p)
	}
	s, err := k.start(ev)
	if err != nil {
		return s, err
	}
	l, err := k.length(ev)
	if err != nil {
		return time.Time{}, err
	}
	return l.after(s), nil
}
