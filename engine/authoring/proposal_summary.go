package authoring

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/sandbox"
)

// uses is what one script calls and declares.
type uses struct {
	reads, mutations, hosts, handlers, topics []string
	period                                    map[string]time.Duration // producer → shortest gap between runs
	watch                                     map[string]string        // producer → the folder whose changes wake it
	concurrency                               map[string]int           // consumer → runs at once
	schedules                                 []string
}

// usesOf is what sc's manifest names; a script without one names
// nothing it may call.
func usesOf(sc *sandbox.Script) uses {
	m := sc.Manifest
	if m == nil {
		m = &sandbox.Manifest{}
	}
	u := uses{period: map[string]time.Duration{}, watch: map[string]string{}, concurrency: map[string]int{}, reads: m.Names(false),
		mutations: m.Names(true), hosts: slices.Clone(m.Hosts), topics: slices.Clone(sc.Workflow.Topics)}
	for _, p := range sc.Workflow.Producers {
		u.handlers = append(u.handlers, p.Name)
		u.period[p.Name] = periodOf(p.Schedule)
		u.watch[p.Name] = p.Schedule.Watch
		u.schedules = append(u.schedules, p.Name+": "+scheduleWords(p.Schedule))
	}
	for _, c := range sc.Workflow.Consumers {
		u.handlers = append(u.handlers, c.Name)
		u.concurrency[c.Name] = max(c.Concurrency, 1)
	}
	slices.Sort(u.topics)
	return u
}

// scheduleWords is a schedule as the person reads it: its interval or cron
// and, beside it, the folder whose changes wake it (Text alone leaves a
// watch beside an interval unsaid).
func scheduleWords(s sandbox.Schedule) string {
	switch {
	case s.Watch == "" || strings.Contains(s.Text, "watch"):
		return s.Text
	case s.Text == "":
		return "watch " + s.Watch
	}
	return s.Text + ", watch " + s.Watch
}

// periodOf is the shortest gap between two runs of a schedule: its
// interval, for a cron expression the least gap over its next runs, for a
// watch alone its rescan (a change wakes it sooner, said apart).
func periodOf(s sandbox.Schedule) time.Duration {
	if s.Cron == "" && s.Interval == 0 && s.Watch != "" {
		return sandbox.WatchRescan
	}
	if s.Cron == "" {
		return s.Interval
	}
	sched, err := cron.ParseStandard(s.Cron)
	if err != nil {
		return 0
	}
	// a fixed start, so the answer never depends on today's date
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	least := time.Duration(0)
	for range 400 {
		next := sched.Next(t)
		if gap := next.Sub(t); least == 0 || gap < least {
			least = gap
		}
		t = next
	}
	return least
}

// summarize compares a proposed script with the deployed one (nil: none)
// under the workflow's grants.
func summarize(base, next *sandbox.Script, grants []api.GrantView) api.ProposalSummary {
	n := usesOf(next)
	s := api.ProposalSummary{Reads: orNone(n.reads), Hosts: orNone(n.hosts), Handlers: orNone(n.handlers), Topics: orNone(n.topics),
		Schedules: orNone(n.schedules), Mutations: orNone(n.mutations), Grants: []string{}, UsesGrants: []string{}, Adds: []string{}, Widens: []string{}}
	for _, c := range n.mutations {
		if mode, _ := engine.GrantModeOf(grants, c, "", connectors.ScopeName, nil); mode != engine.GrantAllow {
			s.Grants = append(s.Grants, c)
		}
		for _, g := range grants {
			if g.Capability == c {
				s.UsesGrants = append(s.UsesGrants, grantWords(g))
			}
		}
	}
	var b uses
	if base != nil {
		b = usesOf(base)
	}
	added := func(what string, now, before []string, widens bool) {
		for _, x := range now {
			if slices.Contains(before, x) {
				continue
			}
			s.Adds = append(s.Adds, what+" "+x)
			if widens && base != nil {
				s.Widens = append(s.Widens, what+" "+x)
			}
		}
	}
	added("read", n.reads, b.reads, true)
	added("host", n.hosts, b.hosts, true)
	added("handler", n.handlers, b.handlers, true)
	added("topic", n.topics, b.topics, true)
	// a new mutation is gated by the grants (Grants, UsesGrants say which)
	added("mutation", n.mutations, b.mutations, false)
	for _, p := range next.Workflow.Producers {
		was, ok := b.period[p.Name]
		now := n.period[p.Name]
		if ok && now > 0 && was > 0 && now < was {
			why := fmt.Sprintf("faster schedule %s: every %s (was every %s)", p.Name, now, was)
			s.Adds = append(s.Adds, why)
			s.Widens = append(s.Widens, why)
		}
		// a watch runs the producer on every change of its folder: as
		// much more often as the folder changes
		if w := n.watch[p.Name]; ok && w != "" && w != b.watch[p.Name] {
			why := fmt.Sprintf("faster schedule %s: woken by every change of %s", p.Name, w)
			s.Adds = append(s.Adds, why)
			s.Widens = append(s.Widens, why)
		}
	}
	for _, c := range next.Workflow.Consumers {
		was, ok := b.concurrency[c.Name]
		if now := n.concurrency[c.Name]; ok && now > was {
			why := fmt.Sprintf("more at once %s: up to %d runs at once (was %d)", c.Name, now, was)
			s.Adds = append(s.Adds, why)
			s.Widens = append(s.Widens, why)
		}
	}
	return s
}

// grantWords is an existing grant as the person made it: "your grant
// files.write allow, any path".
func grantWords(g api.GrantView) string {
	scope := g.Scope
	if scope == "" {
		noun := map[string]string{"files": "path", "http": "host"}[strings.SplitN(g.Capability, ".", 2)[0]]
		if noun == "" {
			noun = "scope"
		}
		scope = "any " + noun
	}
	out := fmt.Sprintf("your grant %s %s, %s", g.Capability, g.Mode, scope)
	if g.DailyLimit > 0 {
		out += fmt.Sprintf(", at most %d a day", g.DailyLimit)
	}
	return out
}
