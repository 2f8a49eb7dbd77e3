package calendar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

const (
	// zoneFloor is the first year a yearly onset is walked from, so the
	// walk reaches zoneHorizon; earlier times keep the first onset's offset.
	zoneFloor = 1970
	// zoneHorizon is the last year a VTIMEZONE's onsets are walked to;
	// later times keep the offset of the last onset before it.
	zoneHorizon = 2200
	// maxOnsets bounds the onsets walked in one sub-component of a
	// VTIMEZONE: a yearly rule is some 230 from zoneFloor; a rule
	// changing clocks every second is no zone anyone lives in.
	maxOnsets = 1 << 13
)

// vtimezone is the zone the VTIMEZONE of cal with TZID tzid defines: its
// STANDARD and DAYLIGHT sub-components, each an offset (TZOFFSETTO) taking
// effect at the onsets its DTSTART, RRULE and RDATE give, in the local time
// of the offset before (TZOFFSETFROM). nil if cal has none, or one that
// can't be read.
//
// It is a *time.Location, not a lookup of our own, so that times read in
// it and a recurrence walked in it (a weekly meeting at 09:00 stays at
// 09:00 when clocks change) behave as in any IANA zone. Go builds a
// Location only from tzdata, so the onsets are written as TZif (RFC 8536).
func vtimezone(cal *ical.Calendar, tzid string) *time.Location {
	for _, comp := range cal.Children {
		if comp.Name != ical.CompTimezone {
			continue
		}
		if id, _ := comp.Props.Text(ical.PropTimezoneID); id != tzid {
			continue
		}
		return zoneCache.get(comp, tzid)
	}
	return nil
}

// zoneCache holds the zones made from VTIMEZONEs, by their text: making
// one walks some 500 onsets (milliseconds), and every invitation from one
// sender carries the same definition.
var zoneCache = &zones{byText: map[string]*time.Location{}}

// maxCachedZones bounds zoneCache; past it, it starts again.
const maxCachedZones = 256

type zones struct {
	mu     sync.Mutex
	byText map[string]*time.Location // nil: can't be read
}

func (z *zones) get(comp *ical.Component, tzid string) *time.Location {
	var key strings.Builder
	fmt.Fprint(&key, comp.Props) // maps print sorted by key
	for _, sub := range comp.Children {
		fmt.Fprint(&key, "\x00", sub.Name, sub.Props)
	}
	z.mu.Lock()
	loc, ok := z.byText[key.String()]
	z.mu.Unlock()
	if ok {
		return loc
	}
	loc, err := zoneOf(comp, tzid)
	if err != nil {
		loc = nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.byText) >= maxCachedZones {
		clear(z.byText)
	}
	z.byText[key.String()] = loc
	return loc
}

// offsetType is one local time type of a zone.
type offsetType struct {
	offset int // seconds east of UTC
	dst    bool
	name   string
}

// onset is a moment a zone's offset changes.
type onset struct {
	at int64 // Unix seconds
	to offsetType
}

func zoneOf(comp *ical.Component, tzid string) (*time.Location, error) {
	var onsets []onset
	// the earliest onset; its TZOFFSETFROM held before it
	var first onset
	firstFrom, found := 0, false
	standards, daylights := 0, 0
	for _, sub := range comp.Children {
		dst := sub.Name == ical.CompTimezoneDaylight
		if !dst && sub.Name != ical.CompTimezoneStandard {
			continue
		}
		if dst {
			daylights++
		} else {
			standards++
		}
		from, err := utcOffset(sub, ical.PropTimezoneOffsetFrom)
		if err != nil {
			return nil, err
		}
		to, err := utcOffset(sub, ical.PropTimezoneOffsetTo)
		if err != nil {
			return nil, err
		}
		name, _ := sub.Props.Text(ical.PropTimezoneName)
		if name == "" || !printable(name) {
			name = offsetName(to)
		}
		typ := offsetType{offset: to, dst: dst, name: name}
		walls, err := onsetWalls(sub, from)
		if err != nil {
			return nil, err
		}
		for _, w := range walls {
			o := onset{at: w.Unix() - int64(from), to: typ}
			onsets = append(onsets, o)
			if !found || o.at < first.at {
				first, firstFrom, found = o, from, true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("VTIMEZONE %q has no STANDARD or DAYLIGHT onset", tzid)
	}
	if daylights == 0 && standards == 1 {
		return time.FixedZone(tzid, first.to.offset), nil
	}
	sort.SliceStable(onsets, func(i, j int) bool { return onsets[i].at < onsets[j].at })
	before := offsetType{offset: firstFrom, name: offsetName(firstFrom)}
	data, err := tzif(before, onsets)
	if err != nil {
		return nil, fmt.Errorf("VTIMEZONE %q: %w", tzid, err)
	}
	return time.LoadLocationFromTZData(tzid, data)
}

// onsetWalls lists the local times (read as UTC) at which sub takes
// effect: its DTSTART, its RRULE's occurrences to zoneHorizon, its RDATEs.
func onsetWalls(sub *ical.Component, from int) ([]time.Time, error) {
	sp := sub.Props.Get(ical.PropDateTimeStart)
	if sp == nil {
		return nil, fmt.Errorf("%s has no DTSTART", sub.Name)
	}
	start, err := wall(sp.Value)
	if err != nil {
		return nil, err
	}
	walls := []time.Time{start}
	if rp := sub.Props.Get(ical.PropRecurrenceRule); rp != nil {
		opt, err := rrule.StrToROptionInLocation(rp.Value, time.UTC)
		if err != nil {
			return nil, fmt.Errorf("%s RRULE: %w", sub.Name, err)
		}
		for _, part := range strings.Split(strings.ToUpper(rp.Value), ";") {
			if strings.HasPrefix(part, "UNTIL=") && strings.HasSuffix(part, "Z") {
				// a moment, where the walk is in local time
				opt.Until = opt.Until.Add(time.Duration(from) * time.Second)
			}
		}
		opt.Dtstart = start
		if opt.Freq == rrule.YEARLY && opt.Count == 0 && start.Year() < zoneFloor {
			// rrule-go walks no more than 292 years (a time.Duration) from
			// DTSTART, and Outlook's is 1601: start the walk closer, by
			// whole steps of the rule (by fours, for a 29 February).
			step := 4 * max(opt.Interval, 1)
			years := (zoneFloor - start.Year() + step - 1) / step * step
			opt.Dtstart = start.AddDate(years, 0, 0)
		}
		rule, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil, fmt.Errorf("%s RRULE: %w", sub.Name, err)
		}
		for next := rule.Iterator(); ; {
			t, ok := next()
			if !ok || t.Year() > zoneHorizon {
				break
			}
			if len(walls) > maxOnsets {
				return nil, fmt.Errorf("%s changes offset more than %d times", sub.Name, maxOnsets)
			}
			walls = append(walls, t)
		}
	}
	for _, rp := range sub.Props[ical.PropRecurrenceDates] {
		for _, v := range strings.Split(rp.Value, ",") {
			t, err := wall(strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
			walls = append(walls, t)
		}
	}
	return walls, nil
}

// wall reads a local date-time, or a date, as UTC.
func wall(v string) (time.Time, error) {
	for _, layout := range []string{"20060102T150405", "20060102"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("onset %q is not a local date-time", v)
}

// utcOffset reads TZOFFSETFROM or TZOFFSETTO: ±hhmm or ±hhmmss.
func utcOffset(sub *ical.Component, name string) (int, error) {
	p := sub.Props.Get(name)
	if p == nil {
		return 0, fmt.Errorf("%s has no %s", sub.Name, name)
	}
	v := strings.TrimSpace(p.Value)
	if (len(v) != 5 && len(v) != 7) || (v[0] != '+' && v[0] != '-') {
		return 0, fmt.Errorf("%s %s %q is not ±hhmm", sub.Name, name, v)
	}
	secs := 0
	for i, unit := range []int{3600, 60, 1} {
		if 1+2*i >= len(v) {
			break
		}
		n, err := strconv.Atoi(v[1+2*i : 3+2*i])
		if err != nil {
			return 0, fmt.Errorf("%s %s %q is not ±hhmm", sub.Name, name, v)
		}
		secs += n * unit
	}
	if secs >= 24*3600 {
		return 0, fmt.Errorf("%s %s %q is a day or more", sub.Name, name, v)
	}
	if v[0] == '-' {
		secs = -secs
	}
	return secs, nil
}

func offsetName(secs int) string {
	return time.Unix(0, 0).In(time.FixedZone("", secs)).Format("-0700")
}

// printable: TZif abbreviations are ASCII without NUL.
func printable(s string) bool {
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

// tzif writes a zone as TZif version 2: before holds until the first
// onset (Go reads an unused first type as that), then each onset.
func tzif(before offsetType, onsets []onset) ([]byte, error) {
	types := []offsetType{before}
	index := map[offsetType]int{}
	var times []int64
	var idx []byte
	for _, o := range onsets {
		i, ok := index[o.to]
		if !ok {
			if i = len(types); i > 255 {
				return nil, fmt.Errorf("more than 256 offsets")
			}
			index[o.to] = i
			types = append(types, o.to)
		}
		if n := len(times); n > 0 && times[n-1] == o.at {
			idx[n-1] = byte(i) // two onsets at once: the later listed wins
			continue
		}
		times, idx = append(times, o.at), append(idx, byte(i))
	}
	var names []byte
	at := map[string]int{}
	for _, t := range types {
		if _, ok := at[t.name]; !ok {
			at[t.name] = len(names)
			names = append(append(names, t.name...), 0)
		}
	}
	var b bytes.Buffer
	header := func(timecnt, typecnt, charcnt int) {
		b.WriteString("TZif2")
		b.Write(make([]byte, 15))
		for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} {
			binary.Write(&b, binary.BigEndian, uint32(n))
		}
	}
	// the 32-bit block readers of version 2 skip: one type, no transitions
	header(0, 1, 1)
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0})
	header(len(times), len(types), len(names))
	for _, t := range times {
		binary.Write(&b, binary.BigEndian, t)
	}
	b.Write(idx)
	for _, t := range types {
		binary.Write(&b, binary.BigEndian, int32(t.offset))
		dst := byte(0)
		if t.dst {
			dst = 1
		}
		b.Write([]byte{dst, byte(at[t.name])})
	}
	b.Write(names)
	b.WriteString("\n\n")
	return b.Bytes(), nil
}
