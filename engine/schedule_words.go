package engine

import (
	"time"

	"keep/sandbox"
)

// schedule text for a producer, in words; unwatched: its watch is not in
// effect (folders.unwatched), and the words say what runs it meanwhile.
func scheduleWords(s sandbox.Schedule, unwatched bool) string {
	var w string
	switch {
	case s.Cron != "":
		w = "Runs on cron " + s.Cron
	case s.Interval > 0:
		w = "Checks every " + durationWords(s.Interval)
	case s.Watch != "" && unwatched:
		w = "Checks every " + durationWords(sandbox.WatchRescan)
	case s.Watch != "":
		return "Checks when " + s.Watch + " changes, and every " + durationWords(sandbox.WatchRescan)
	}
	switch {
	case s.Watch != "" && unwatched:
		w += " (" + s.Watch + " is not watched)"
	case s.Watch != "":
		w += ", and when " + s.Watch + " changes"
	}
	return w
}

func durationWords(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return plural(int(d/(24*time.Hour)), "day")
	case d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return plural(int(d/time.Second), "second")
}

func plural(n int, unit string) string {
	if n == 1 {
		return unit
	}
	return itoa(n) + " " + unit + "s"
}
