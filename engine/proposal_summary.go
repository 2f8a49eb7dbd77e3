package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"keep/connectors"
	"keep/sandbox"
)

// ProposalSummary is what a proposed script uses and what it adds to the
// version it would replace: the person reads this before the diff.
type ProposalSummary struct {
	Reads     []string `json:"reads"`     // connector.method of every read it calls
	Hosts     []string `json:"hosts"`     // hosts its source names
	Handlers  []string `json:"handlers"`  // producer and consumer names
	Topics    []string `json:"topics"`    // declared topics
	Schedules []string `json:"schedules"` // "producer: every 5m"
	Mutations []string `json:"mutations"` // connector.method of every mutation it calls
	// Grants are the mutations the workflow's grants do not allow yet:
	// accepting does not grant them, each would wait for you.
	Grants []string `json:"grants"`
	// Adds says, in words, what is new against the deployed version
	// (everything, for a workflow not deployed yet).
	Adds []string `json:"adds"`
	// Widens is the part of Adds a repair may not bring: a read, a host, a
	// handler, a topic or a faster schedule. A repair with any is refused.
	Widens []string `json:"widens"`
}

var (
	// scriptCall is a ctx.connector.method( call in a script's source.
	scriptCall = regexp.MustCompile(`\bctx\s*\.\s*([A-Za-z_$][\w$]*)\s*\.\s*([A-Za-z_$][\w$]*)\s*\(`)
	// urlHost is the host (and port) of an http(s) URL in text.
	urlHost = regexp.MustCompile(`(?i)\bhttps?://([a-z0-9][a-z0-9.\-]*(?::\d+)?)`)
)

// hostsIn lists the hosts of the URLs in s, lower-case, sorted, once each.
func hostsIn(s string) []string {
	var out []string
	for _, m := range urlHost.FindAllStringSubmatch(s, -1) {
		h := strings.ToLower(m[1])
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// uses is what one script calls and declares.
type uses struct {
	reads, mutations, hosts, handlers, topics []string
	period                                    map[string]time.Duration // producer → shortest gap between runs
	schedules                                 []string
}

func usesOf(reg *connectors.Registry, sc *sandbox.Script) uses {
	u := uses{period: map[string]time.Duration{}, hosts: hostsIn(string(sc.Source)), topics: slices.Clone(sc.Workflow.Topics)}
	for _, m := range scriptCall.FindAllStringSubmatch(string(sc.Source), -1) {
		_, meth, err := reg.Lookup(m[1], m[2])
		if err != nil {
			continue
		}
		name := m[1] + "." + m[2]
		list := &u.reads
		if meth.Kind == connectors.Mutate {
			list = &u.mutations
		}
		if !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for _, p := range sc.Workflow.Producers {
		u.handlers = append(u.handlers, p.Name)
		u.period[p.Name] = periodOf(p.Schedule)
		u.schedules = append(u.schedules, p.Name+": "+p.Schedule.Text)
	}
	for _, c := range sc.Workflow.Consumers {
		u.handlers = append(u.handlers, c.Name)
	}
	slices.Sort(u.reads)
	slices.Sort(u.mutations)
	slices.Sort(u.topics)
	return u
}

// periodOf is the shortest gap between two runs of a schedule: its
// interval, or for a cron expression the least gap over its next runs.
func periodOf(s sandbox.Schedule) time.Duration {
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
func summarize(reg *connectors.Registry, base, next *sandbox.Script, grants []GrantView) ProposalSummary {
	n := usesOf(reg, next)
	s := ProposalSummary{Reads: orNone(n.reads), Hosts: orNone(n.hosts), Handlers: orNone(n.handlers), Topics: orNone(n.topics),
		Schedules: orNone(n.schedules), Mutations: orNone(n.mutations), Grants: []string{}, Adds: []string{}, Widens: []string{}}
	for _, c := range n.mutations {
		if mode, _ := grantMode(grants, c, "", nil); mode != GrantAllow {
			s.Grants = append(s.Grants, c)
		}
	}
	var b uses
	if base != nil {
		b = usesOf(reg, base)
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
	added("mutation", n.mutations, b.mutations, false)
	for _, p := range next.Workflow.Producers {
		was, ok := b.period[p.Name]
		now := n.period[p.Name]
		if ok && now > 0 && was > 0 && now < was {
			why := fmt.Sprintf("faster schedule %s: every %s (was every %s)", p.Name, now, was)
			s.Adds = append(s.Adds, why)
			s.Widens = append(s.Widens, why)
		}
	}
	return s
}
