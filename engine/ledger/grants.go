package ledger

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"keep/storage"
)

// The grant decision of DESIGN.md §7.4, one rule for a run's call and a dry
// run's: the narrowest grant whose scope covers the call decides. Allow
// performs it, unless the grant's daily limit is reached; anything else
// waits for the person, and says why. Only GrantAllow allows: no grant, ask,
// deny, a reached limit and a mode this code does not know all wait (deny
// by default), and deny too only waits, so a denied call is never lost.

// GrantVerdict is what a workflow's grants say of one call.
type GrantVerdict struct {
	// Mode is GrantAllow (perform it) or GrantAsk (it waits for the person).
	Mode storage.GrantMode
	// Why it waits, as the approval says it; "" when allowed.
	Why string
	// Grant is the deciding grant; nil when none covers the call.
	Grant *storage.Grant
}

// CallsToday counts the calls of the last day that g's daily limit covers,
// this one not included.
type CallsToday func(g *storage.Grant) (int, error)

// DecideGrant applies grants to a call of capability in scope. today is
// asked only of an allowing grant with a daily limit; nil counts none.
//
// A scope naming several things (a send's recipient domains,
// "evil.com,example.org") is decided for each of them, after the whole (a
// grant that covers the whole and does not allow decides): the call is
// allowed only if every one of them is, so a grant for one domain does not
// carry mail to another along, and a deny for one is not passed by naming
// it beside another. A grant's daily limit is counted once.
func DecideGrant(grants []storage.Grant, capability, scope string, today CallsToday) (GrantVerdict, error) {
	whole, err := decideOne(grants, capability, scope, today, nil)
	parts := strings.Split(scope, ",")
	if err != nil || len(parts) == 1 || whole.Mode != storage.GrantAllow && whole.Grant != nil {
		return whole, err
	}
	var allowed []*storage.Grant
	if whole.Grant != nil {
		allowed = append(allowed, whole.Grant)
	}
	for _, part := range parts {
		v, err := decideOne(grants, capability, part, today, allowed)
		if err != nil || v.Mode != storage.GrantAllow {
			return v, err
		}
		if !slices.Contains(allowed, v.Grant) {
			allowed = append(allowed, v.Grant)
		}
	}
	return GrantVerdict{Mode: storage.GrantAllow, Grant: allowed[0]}, nil
}

// decideOne is DecideGrant for one unit of a scope; a grant in counted has
// had its daily limit counted already.
func decideOne(grants []storage.Grant, capability, scope string, today CallsToday, counted []*storage.Grant) (GrantVerdict, error) {
	best := DecidingGrant(grants, grantOf, capability, scope)
	wait := func(format string, args ...any) (GrantVerdict, error) {
		return GrantVerdict{Mode: storage.GrantAsk, Why: fmt.Sprintf(format, args...), Grant: best}, nil
	}
	switch {
	case best == nil:
		return wait("the workflow has no grant for %s%s", capability, ScopeText(scope))
	case best.Mode == storage.GrantDeny:
		return wait("your grant denies %s%s; approving allows this one call", capability, ScopeText(best.Scope))
	case best.Mode != storage.GrantAllow:
		return wait("your grant for %s asks before each call", capability)
	}
	if best.DailyLimit > 0 && today != nil && !slices.Contains(counted, best) {
		n, err := today(best)
		if err != nil {
			return GrantVerdict{}, err
		}
		if n >= best.DailyLimit {
			return wait("%s is past its limit of %d a day; approving allows this one call, and the limit stays", capability, best.DailyLimit)
		}
	}
	return GrantVerdict{Mode: storage.GrantAllow, Grant: best}, nil
}

func grantOf(g *storage.Grant) (string, string, bool) {
	return g.Capability, g.Scope, g.Mode == storage.GrantDeny
}

// DecidingGrant is the grant that decides a call of capability in scope:
// the narrowest of those whose scope covers it; nil when none does. A deny
// covers what it names however it is spelled (DenyMatches). of reads a
// grant's capability, scope and whether it denies, so the engine's views of
// grants are decided by the same rule as the ledger's rows.
func DecidingGrant[G any](grants []G, of func(*G) (capability, scope string, deny bool), capability, scope string) *G {
	var best *G
	bestScope := ""
	for i := range grants {
		c, sc, deny := of(&grants[i])
		covers := ScopeMatches(sc, scope) || deny && DenyMatches(sc, scope)
		if c == capability && covers && (best == nil || len(sc) > len(bestScope)) {
			best, bestScope = &grants[i], sc
		}
	}
	return best
}

// ScopeMatches says whether a grant's scope covers a call's: an empty one
// covers everything; otherwise the call's must be the grant's or lie under
// it: a path in a folder, a sub-domain of a domain. A scope naming several
// things (comma-separated, as a send's recipient domains) is covered when
// each of them is covered by one the grant names. Paths compare cleaned
// ("./docs/" is docs).
func ScopeMatches(grant, call string) bool {
	return matches(grant, call, cleaned)
}

// cleaned is a scope with a path's spelling undone: "./docs/" is docs.
func cleaned(s string) string {
	if s == "" {
		return ""
	}
	return path.Clean(s)
}

// DenyMatches is ScopeMatches for a deny, which no spelling of what it
// names passes: case and a trailing dot (a host's absolute form) aside.
func DenyMatches(grant, call string) bool {
	return matches(grant, call, func(s string) string {
		s = strings.ToLower(cleaned(s))
		if len(s) > 1 {
			s = strings.TrimSuffix(s, ".")
		}
		return s
	})
}

func matches(grant, call string, canon func(string) string) bool {
	if grant == "" || grant == call {
		return true
	}
	gs := strings.Split(grant, ",")
	for _, c := range strings.Split(call, ",") {
		if !slices.ContainsFunc(gs, func(g string) bool { return under(canon(g), canon(c)) }) {
			return false
		}
	}
	return true
}

// under: call is grant, a path below it, or (neither a path) a sub-domain.
func under(grant, call string) bool {
	if grant == "" || grant == call {
		return grant == call
	}
	if strings.HasPrefix(call, strings.TrimSuffix(grant, "/")+"/") {
		return true
	}
	// a host or a domain holds no slash: "notes.md" does not take in
	// "journal/diary.notes.md"
	return !strings.Contains(grant, "/") && !strings.Contains(call, "/") && strings.HasSuffix(call, "."+grant)
}

// ScopeText is a scope as the reasons write it: " (scope)", or nothing.
func ScopeText(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
