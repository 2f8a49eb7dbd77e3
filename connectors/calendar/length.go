package calendar

import (
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
)

// length is how long an event lasts as RFC 5545 counts it: days are
// calendar days (§3.3.6), 23 or 25 hours where the clocks change, so
// that an all-day event ends at midnight and a timed one of P1D at its
// own time the next day; exact is time on top of them.
type length struct {
	days  int
	exact time.Duration
}

// after is the end of an event that starts at t.
func (l length) after(t time.Time) time.Time {
	return t.AddDate(0, 0, l.days).Add(l.exact)
}

// most is at least as long as l lasts from any start, for how far back
// a walk looks for occurrences still running: a day is off 24 hours by a
// change of clocks, an hour in most zones, a whole day where a zone
// skipped one over the date line.
func (l length) most() time.Duration {
	d := l.exact + time.Duration(l.days)*24*time.Hour
	if l.days != 0 {
		d += 24 * time.Hour
	}
	return d
}

// length is ev's: DTEND less DTSTART, in days where both are dates; else
// DURATION; else a day for an all-day event; else none (RFC 5545
// §3.6.1). Each occurrence of a series lasts it too: the same exact time
// by DTEND, the same calendar days by DURATION (§3.8.5.3).
func (k *clock) length(ev *ical.Event) (length, error) {
	sp := ev.Props.Get(ical.PropDateTimeStart)
	if sp == nil {
		return length{}, nil
	}
	s, err := k.at(sp)
	if err != nil {
		return length{}, err
	}
	if ep := ev.Props.Get(ical.PropDateTimeEnd); ep != nil {
		e, err := k.at(ep)
		if err != nil {
			return length{}, err
		}
		if isDate(sp) && isDate(ep) {
			return length{days: daysBetween(s, e)}, nil
		}
		return length{exact: e.Sub(s)}, nil
	}
	if p := ev.Props.Get(ical.PropDuration); p != nil {
		return nominal(p)
	}
	if isDate(sp) {
		return length{days: 1}, nil
	}
	return length{}, nil
}

// daysBetween is how many calendar days b is after a, each read on its
// own clock.
func daysBetween(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	d := time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC).Sub(time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC))
	return int(d / (24 * time.Hour))
}

// nominal reads a DURATION with its weeks and days as calendar days.
// go-ical's Duration, which validates it here, counts a day as 24
// hours; what it counted beyond them is the exact part.
func nominal(p *ical.Prop) (length, error) {
	total, err := p.Duration()
	if err != nil {
		return length{}, err
	}
	v := strings.ToUpper(p.Value)
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimPrefix(strings.TrimLeft(v, "+-"), "P")
	// weeks and days come before the T, as go-ical has checked
	date, _, _ := strings.Cut(v, "T")
	days := 0
	for date != "" {
		i := strings.IndexAny(date, "DW")
		n, err := strconv.Atoi(date[:i])
		if err != nil {
			return length{}, err
		}
		if date[i] == 'W' {
			n *= 7
		}
		days += n
		date = date[i+1:]
	}
	if neg {
		days = -days
	}
	// the subtraction wraps as go-ical's sum did, so exact holds even
	// for a duration past time.Duration's 292 years
	return length{days: days, exact: total - time.Duration(days)*24*time.Hour}, nil
}
