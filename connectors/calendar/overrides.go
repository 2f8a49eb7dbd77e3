package calendar

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/emersion/go-ical"
)

// overrides are the components of one calendar object that carry a
// RECURRENCE-ID. Each stands for one occurrence of the series, or, with
// RANGE=THISANDFUTURE (RFC 5545 §3.2.13: what a calendar app writes for
// "this and all following"), for that occurrence and every later one.
// Neither go-ical nor rrule-go reads RANGE, so it is read here.
type overrides struct {
	// one holds the overrides not cancelled, by recurrence id (UTC,
	// RFC 3339); a range's is here too, standing for its own occurrence
	// as any override does.
	one map[string]ical.Event
	// lastOne is the latest recurrence id in one.
	lastOne time.Time
	// cancelled are the recurrence ids of cancelled overrides, which
	// remove their occurrence as EXDATE does.
	cancelled []time.Time
	// ranges are the THISANDFUTURE overrides, earliest first.
	ranges []rangeOverride
}

// rangeOverride is an override of its occurrence and every later one.
type rangeOverride struct {
	from      time.Time // its recurrence id
	ev        ical.Event
	cancelled bool
	// shift is how far it moved its own occurrence; days, the same in
	// calendar days when both are dates, so that an all-day series keeps
	// to its days over a change of clocks.
	shift time.Duration
	days  int
	// length is its own, which the later occurrences take too.
	length length
}

func readOverrides(cal *ical.Calendar, k *clock) (*overrides, error) {
	o := &overrides{one: map[string]ical.Event{}}
	for _, ev := range cal.Events() {
		rid := ev.Props.Get(ical.PropRecurrenceID)
		if rid == nil {
			continue
		}
		t, err := k.at(rid)
		if err != nil {
			return nil, err
		}
		r := rangeOverride{from: t, ev: ev, cancelled: isCancelled(&ev)}
		if r.cancelled {
			o.cancelled = append(o.cancelled, t)
		} else {
			o.one[t.UTC().Format(time.RFC3339)] = ev
			if t.After(o.lastOne) {
				o.lastOne = t
			}
		}
		if !strings.EqualFold(rid.Params.Get(ical.ParamRange), "THISANDFUTURE") {
			continue
		}
		// without a DTSTART there is no shift to read; the listing fails
		// on it, as on any override without one, where it applies
		if sp := ev.Props.Get(ical.PropDateTimeStart); sp != nil && !r.cancelled {
			s, err := k.start(&ev)
			if err != nil {
				return nil, err
			}
			l, err := k.length(&ev)
			if err != nil {
				return nil, err
			}
			r.shift, r.length = s.Sub(t), l
			if isDate(sp) && isDate(rid) {
				r.days = int(math.Round(r.shift.Hours() / 24))
			}
		}
		o.ranges = append(o.ranges, r)
	}
	sort.SliceStable(o.ranges, func(i, j int) bool { return o.ranges[i].from.Before(o.ranges[j].from) })
	return o, nil
}

// covering is the range override that applies to occurrence occ: the
// latest at or before it; -1 if none.
func (o *overrides) covering(occ time.Time) int {
	return sort.Search(len(o.ranges), func(i int) bool { return o.ranges[i].from.After(occ) }) - 1
}

// move is where occurrence occ starts under r.
func (r *rangeOverride) move(occ time.Time) time.Time {
	if r.days != 0 {
		return occ.AddDate(0, 0, r.days)
	}
	return occ.Add(r.shift)
}

// reach is how far before from and after to an occurrence may start and
// still, moved by a range override, overlap [from, to): ahead, beyond
// own, the longest the series' own occurrences last; behind, by any
// moved earlier. An hour more
// for a shift in days over a change of clocks.
func (o *overrides) reach(own time.Duration) (ahead, behind time.Duration) {
	ahead = own
	for _, r := range o.ranges {
		if !r.cancelled {
			ahead = max(ahead, r.shift+r.length.most()+time.Hour)
			behind = max(behind, -r.shift+time.Hour)
		}
	}
	return ahead, behind
}

// gone says whether occurrence occ, which no override of its own
// stands for, is cancelled by a range override; over says whether no
// later occurrence can stand either (all cancelled so, with no override
// of its own after occ).
func (o *overrides) gone(occ time.Time) (gone, over bool) {
	i := o.covering(occ)
	if i < 0 || !o.ranges[i].cancelled {
		return false, false
	}
	return true, i == len(o.ranges)-1 && occ.After(o.lastOne)
}
