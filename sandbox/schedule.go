package sandbox

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

var intervalSyntax = regexp.MustCompile(`^(\d+)([smhd])$`)

// ParseInterval parses the interval syntax of DESIGN.md §8: digits and one
// unit of s, m, h or d (d is 24h).
func ParseInterval(s string) (time.Duration, error) {
	m := intervalSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("interval %q is not a number followed by s, m, h or d (like 30s, 5m, 1h, 1d)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	if err != nil || n > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("interval %q is too long", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("interval %q is zero", s)
	}
	return time.Duration(n) * unit, nil
}

// ParseCron parses a 5-field cron expression (minute hour day-of-month month
// day-of-week). Descriptors like @daily and a TZ= prefix are refused so that
// what the user wrote is what `keep workflows` shows.
func ParseCron(s string) (cron.Schedule, error) {
	if n := len(strings.Fields(s)); n != 5 {
		return nil, fmt.Errorf("cron %q has %d fields; want 5 (minute hour day-of-month month day-of-week)", s, n)
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", s, err)
	}
	return sched, nil
}

// ParseSchedule turns a schedule's text as stored (Schedule.Text) back into a
// Schedule: an interval when it has the interval syntax, else a cron
// expression.
func ParseSchedule(text string) (Schedule, error) {
	text = strings.TrimSpace(text)
	if intervalSyntax.MatchString(text) {
		d, err := ParseInterval(text)
		if err != nil {
			return Schedule{}, err
		}
		return Schedule{Interval: d, Text: text}, nil
	}
	if _, err := ParseCron(text); err != nil {
		return Schedule{}, err
	}
	return Schedule{Cron: text, Text: text}, nil
}

// Next is the first run time strictly after `after`: after+Interval for an
// interval, the cron expression's next match (in after's location) for a
// cron schedule, after+WatchRescan for a watch alone. It is the zero time
// for a schedule that does not parse.
func (s Schedule) Next(after time.Time) time.Time {
	if s.Interval > 0 {
		return after.Add(s.Interval)
	}
	if s.Cron == "" && s.Watch != "" {
		return after.Add(WatchRescan)
	}
	sched, err := ParseCron(s.Cron)
	if err != nil {
		return time.Time{}
	}
	return sched.Next(after)
}

// WatchRescan is how often a producer that declares a watched folder and no
// interval or cron runs anyway: the watch only wakes it sooner, and an event
// the kernel drops (a full queue, a folder made after the watch) is caught
// here.
const WatchRescan = 5 * time.Minute

// WatchQuiet is how long a watched folder goes without a change before its
// producer is woken, so a burst of files is listed by one run; WatchMaxWait
// bounds that wait from the burst's first change, for a folder that never
// goes quiet.
const (
	WatchQuiet   = 10 * time.Millisecond
	WatchMaxWait = 100 * time.Millisecond
)

// WatchRecheck is how long after a listing that left out a file still
// being written (files.list) its producer looks again, no event telling
// of the writer's close; each listing that finds it still open, no write
// seen since, doubles the wait, up to WatchRecheckMax. A writer at work
// keeps it short (each write starts the waits again, and a copy's close
// follows its last write); one that holds a file open and idle (a log, a
// paused download) costs a listing every WatchRecheckMax, so an idle keep
// beside it stays all but idle.
const (
	WatchRecheck    = 250 * time.Millisecond
	WatchRecheckMax = time.Minute
)

// words is the schedule as `keep workflows` shows it: the interval or cron
// as written, and the watched folder beside it.
func (s Schedule) words() string {
	switch {
	case s.Watch == "":
		return s.Text
	case s.Text == "":
		return "watch " + s.Watch
	}
	return s.Text + ", watch " + s.Watch
}

// watchFolders checks, in the host, the folders a loaded script's producers
// watch (LoadOptions.WatchFolder looks at the disk, which a worker does not
// see): each problem is a diagnostic at the folder's literal.
func watchFolders(s *Script, err error) (*Script, error) {
	if err != nil || s.opts.WatchFolder == nil {
		return s, err
	}
	loc := newLocator(s.FileName, string(s.Source))
	top := or(loc.first(0, "Keep.workflow"), loc.first(0, "export default"))
	producersAt := or(loc.key(top, "producers"), top)
	var diags []Diagnostic
	for _, p := range s.Workflow.Producers {
		if p.Schedule.Watch == "" {
			continue
		}
		if err := s.opts.WatchFolder(p.Schedule.Watch); err != nil {
			at := or(loc.key(producersAt, p.Name), producersAt)
			fieldAt := or(loc.key(at, "schedule"), at)
			diags = append(diags, loc.diag(or(loc.literal(fieldAt, p.Schedule.Watch), fieldAt), "schedule of producer %q: %v", p.Name, err))
		}
	}
	if len(diags) > 0 {
		return nil, &ValidationError{Diagnostics: diags}
	}
	return s, nil
}
