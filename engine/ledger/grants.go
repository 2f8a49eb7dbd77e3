package ledger

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"keep/connectors"
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

// DecideGrant applies grants to a call of capability in scope, a scope of
// kind (what the method's scope names, connectors.ScopeKind). today is
// asked only of an allowing grant with a daily limit; nil counts none.
//
// A scope naming several hosts (a send's recipient domains,
// "evil.com,example.org") is decided for each of them, after the whole (a
// grant that covers the whole and does not allow decides): the call is
// allowed only if every one of them is, so a grant for one domain does not
// carry mail to another along, and a deny for one is not passed by naming
// it beside another. A grant's daily limit is counted once.
func DecideGrant(grants []storage.Grant, capability, scope string, kind connectors.ScopeKind, today CallsToday) (GrantVerdict, error) {
	whole, err := decideOne(grants, capability, scope, kind, today, nil)
	parts := partsOf(scope, kind)
	if err != nil || len(parts) == 1 || whole.Mode != storage.GrantAllow && whole.Grant != nil {
		return whole, err
	}
	var allowed []*storage.Grant
	if whole.Grant != nil {
		allowed = append(allowed, whole.Grant)
	}
	for _, part := range parts {
		v, err := decideOne(grants, capability, part, kind, today, allowed)
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
func decideOne(grants []storage.Grant, capability, scope string, kind connectors.ScopeKind, today CallsToday, counted []*storage.Grant) (GrantVerdict, error) {
	best := DecidingGrant(grants, grantOf, capability, scope, kind)
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
func DecidingGrant[G any](grants []G, of func(*G) (capability, scope string, deny bool), capability, scope string, kind connectors.ScopeKind) *G {
	var best *G
	bestScope := ""
	for i := range grants {
		c, sc, deny := of(&grants[i])
		covers := ScopeMatches(sc, scope, kind) || deny && DenyMatches(sc, scope, kind)
		if c == capability && covers && (best == nil || len(sc) > len(bestScope)) {
			best, bestScope = &grants[i], sc
		}
	}
	return best
}

// ScopeMatches says whether a grant's scope covers a call's, by what the
// scope names: an empty one covers everything; a name only itself; a
// folder what is in it ("./docs/" is docs); a domain its sub-domains,
// hosts compared as DNS does (case and a trailing dot aside), and a call
// naming several hosts is covered when each of them is.
func ScopeMatches(grant, call string, kind connectors.ScopeKind) bool {
	return matches(grant, call, kind, false)
}

// DenyMatches is ScopeMatches for a deny, which no spelling of what it
// names passes: case and a trailing dot aside, whatever the kind.
func DenyMatches(grant, call string, kind connectors.ScopeKind) bool {
	return matches(grant, call, kind, true)
}

func matches(grant, call string, kind connectors.ScopeKind, loose bool) bool {
	if grant == "" || grant == call {
		return true
	}
	canon := func(s string) string {
		if kind == connectors.ScopePath && s != "" {
			s = path.Clean(s)
		}
		if loose || kind == connectors.ScopeHosts {
			s = strings.ToLower(s)
			if len(s) > 1 {
				s = strings.TrimSuffix(s, ".")
			}
		}
		return s
	}
	gs := partsOf(grant, kind)
	for _, c := range partsOf(call, kind) {
		if !slices.ContainsFunc(gs, func(g string) bool { return under(canon(g), canon(c), kind) }) {
			return false
		}
	}
	return true
}

// partsOf is what a scope names, one by one: several hosts, else itself.
func partsOf(scope string, kind connectors.ScopeKind) []string {
	if kind == connectors.ScopeHosts {
		return strings.Split(scope, ",")
	}
	return []string{scope}
}

// under: call is grant, or lies under it by kind's rule.
func under(grant, call string, kind connectors.ScopeKind) bool {
	switch {
	case grant == "" || grant == call:
		return grant == call
	case kind == connectors.ScopePath && grant == ".":
		// the root's folder ("./" cleaned): every path below it
		return call != ".." && !strings.HasPrefix(call, "../") && !strings.HasPrefix(call, "/")
	case kind == connectors.ScopePath:
		return strings.HasPrefix(call, strings.TrimSuffix(grant, "/")+"/")
	case kind == connectors.ScopeHosts:
		return strings.HasSuffix(call, "."+grant)
	}
	return false
}

// ScopeText is a scope as the reasons write it: " (scope)", or nothing.
func ScopeText(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
