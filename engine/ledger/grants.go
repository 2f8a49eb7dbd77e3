package ledger

import (
	"fmt"
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
func DecideGrant(grants []storage.Grant, capability, scope string, today CallsToday) (GrantVerdict, error) {
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
	if best.DailyLimit > 0 && today != nil {
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

func grantOf(g *storage.Grant) (string, string) { return g.Capability, g.Scope }

// DecidingGrant is the grant that decides a call of capability in scope:
// the narrowest of those whose scope covers it; nil when none does. of
// reads a grant's capability and scope, so the engine's views of grants
// are decided by the same rule as the ledger's rows.
func DecidingGrant[G any](grants []G, of func(*G) (capability, scope string), capability, scope string) *G {
	var best *G
	bestScope := ""
	for i := range grants {
		c, sc := of(&grants[i])
		if c == capability && ScopeMatches(sc, scope) && (best == nil || len(sc) > len(bestScope)) {
			best, bestScope = &grants[i], sc
		}
	}
	return best
}

// ScopeMatches: an empty grant scope covers everything; otherwise the
// call's scope must equal it or lie under it (a path prefix, a sub-domain).
func ScopeMatches(grant, call string) bool {
	if grant == "" || grant == call {
		return true
	}
	return strings.HasPrefix(call, strings.TrimSuffix(grant, "/")+"/") || strings.HasSuffix(call, "."+grant)
}

// ScopeText is a scope as the reasons write it: " (scope)", or nothing.
func ScopeText(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
