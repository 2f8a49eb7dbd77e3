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
// run's: for each part of the call's scope (a host, a path), the narrowest
// grant covering it decides (DecidingGrant), and every part must be
// allowed. Allow performs it, unless the grant's daily limit is reached;
// anything else waits for the person, and says why. Only GrantAllow allows: no grant, ask,
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
// A scope naming several places (a send's recipient domains,
// "evil.com,example.org"; a move's source and destination,
// connectors.PathsScope) is decided for each of them (DecidingGrant): the
// call is allowed only if every one of them is, so a grant for one does
// not carry another along, and a deny for one is not passed by naming it
// beside another; the first part not allowed says why. A grant's daily
// limit is counted once.
func DecideGrant(grants []storage.Grant, capability, scope string, kind connectors.ScopeKind, today CallsToday) (GrantVerdict, error) {
	var allowed []*storage.Grant
	parts := partsOf(scope, kind)
	for _, part := range parts {
		v, err := decideOne(grants, capability, part, kind, today, allowed)
		if err != nil || v.Mode != storage.GrantAllow {
			if len(parts) > 1 && v.Grant != nil && v.Grant.Mode != storage.GrantDeny {
				// which of the places asks: the others may be allowed
				v.Why += " (here for " + part + ")"
			}
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

// DecidingGrant is the grant that decides part, one of what a call's
// scope names (connectors.ScopeParts: a host, a path), for capability;
// nil when no grant covers it. of reads a grant's capability, scope and
// whether it denies, so the engine's views of grants are decided by the
// same rule as the ledger's rows.
//
// The rule: among the grants covering part (a deny covers what it names
// however it is spelt, DenyMatches), the narrowest decides, and a grant is
// as narrow as the one of its own parts that covers part: its length,
// spelling aside ("./docs/" is docs; an empty scope is the widest). At the
// same narrowness a deny wins over any other mode. So an allow that merely
// lists more names ("x.com,y.org", as an "approve always" of a send to
// both stored it) is, for x.com, no narrower than a deny for x.com, and
// never outranks it; an allow of mail.x.com, naming less than x.com, does.
func DecidingGrant[G any](grants []G, of func(*G) (capability, scope string, deny bool), capability, part string, kind connectors.ScopeKind) *G {
	var best *G
	bestRank, bestDeny := -1, false
	for i := range grants {
		c, sc, deny := of(&grants[i])
		if c != capability {
			continue
		}
		rank := narrowness(sc, part, kind, deny)
		if rank > bestRank || rank == bestRank && rank >= 0 && deny && !bestDeny {
			best, bestRank, bestDeny = &grants[i], rank, deny
		}
	}
	return best
}

// narrowness is how narrowly grant covers part: the canonical length of
// the longest of grant's parts that covers it; -1 when none does. loose:
// by a deny's rule.
func narrowness(grant, part string, kind connectors.ScopeKind, loose bool) int {
	if grant == "" {
		return 0
	}
	n := -1
	for _, g := range partsOf(grant, kind) {
		if (g == part || under(canon(g, kind, loose), canon(part, kind, loose), kind)) && len(canon(g, kind, loose)) > n {
			n = len(canon(g, kind, loose))
		}
	}
	return n
}

// ScopeMatches says whether a grant's scope covers a call's, by what the
// scope names: an empty one covers everything; a name only itself; a
// folder what is in it ("./docs/" is docs); a domain its sub-domains,
// hosts compared as DNS does (case and a trailing dot aside), and a call
// naming several hosts or paths is covered when each of them is.
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
	gs := partsOf(grant, kind)
	for _, c := range partsOf(call, kind) {
		if !slices.ContainsFunc(gs, func(g string) bool { return under(canon(g, kind, loose), canon(c, kind, loose), kind) }) {
			return false
		}
	}
	return true
}

// CoversAPart says whether a grant's scope covers any of what a call's
// names: the calls a grant's daily limit counts, as it decides each part
// it covers.
func CoversAPart(grant, call string, kind connectors.ScopeKind) bool {
	for _, c := range partsOf(call, kind) {
		if matches(grant, c, kind, false) {
			return true
		}
	}
	return false
}

// canon is a scope's part as it is compared: a path cleaned ("./docs/" is
// docs), a host (or, loose, anything) without case or a trailing dot.
func canon(s string, kind connectors.ScopeKind, loose bool) string {
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

// partsOf is what a scope names, one by one (connectors.ScopeParts).
func partsOf(scope string, kind connectors.ScopeKind) []string {
	return connectors.ScopeParts(scope, kind)
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
