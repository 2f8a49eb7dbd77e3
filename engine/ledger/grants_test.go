package ledger

import (
	"errors"
	"strings"
	"testing"

	"keep/connectors"
	"keep/storage"
)

func TestDecideGrant(t *testing.T) {
	t.Parallel()
	g := func(scope string, mode storage.GrantMode, limit int) storage.Grant {
		return storage.Grant{Capability: "http.request", Scope: scope, Mode: mode, DailyLimit: limit}
	}
	twoToday := func(*storage.Grant) (int, error) { return 2, nil }
	cases := []struct {
		name   string
		grants []storage.Grant
		scope  string
		today  CallsToday
		mode   storage.GrantMode
		why    string
	}{
		{"no grant waits", nil, "example.com", nil, storage.GrantAsk, "the workflow has no grant for http.request (example.com)"},
		{"allow allows", []storage.Grant{g("", storage.GrantAllow, 0)}, "example.com", nil, storage.GrantAllow, ""},
		{"ask waits", []storage.Grant{g("", storage.GrantAsk, 0)}, "", nil, storage.GrantAsk, "asks before each call"},
		{"deny waits, it does not fail", []storage.Grant{g("example.com", storage.GrantDeny, 0)}, "example.com", nil, storage.GrantAsk, "your grant denies http.request (example.com)"},
		{"a mode not known waits (deny by default)", []storage.Grant{g("", "maybe", 0)}, "", nil, storage.GrantAsk, "asks before each call"},
		{"the narrowest scope decides", []storage.Grant{g("", storage.GrantDeny, 0), g("example.com", storage.GrantAllow, 0)}, "api.example.com", nil, storage.GrantAllow, ""},
		{"a grant for another scope does not cover", []storage.Grant{g("other.org", storage.GrantAllow, 0)}, "example.com", nil, storage.GrantAsk, "no grant for"},
		{"a limit reached waits", []storage.Grant{g("", storage.GrantAllow, 2)}, "", twoToday, storage.GrantAsk, "past its limit of 2 a day"},
		{"a limit not reached allows", []storage.Grant{g("", storage.GrantAllow, 3)}, "", twoToday, storage.GrantAllow, ""},
		{"no count, no limit reached", []storage.Grant{g("", storage.GrantAllow, 1)}, "", nil, storage.GrantAllow, ""},
		// of a call to several places, the reason names the one that asks:
		// the others are allowed
		{"the place that asks is named", []storage.Grant{g("", storage.GrantAsk, 0), g("x.com", storage.GrantAllow, 0)}, "x.com,y.org", nil, storage.GrantAsk,
			"your grant for http.request asks before each call (here for y.org)"},
		{"the place past its limit is named", []storage.Grant{g("x.com", storage.GrantAllow, 0), g("y.org", storage.GrantAllow, 2)}, "x.com,y.org", twoToday, storage.GrantAsk,
			"and the limit stays (here for y.org)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := DecideGrant(c.grants, "http.request", c.scope, connectors.ScopeHosts, c.today)
			if err != nil {
				t.Fatal(err)
			}
			if v.Mode != c.mode || !strings.Contains(v.Why, c.why) || (c.why == "") != (v.Why == "") {
				t.Errorf("verdict %+v, want %s because %q", v, c.mode, c.why)
			}
		})
	}
	t.Run("a count that fails is the decision's error", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		_, err := DecideGrant([]storage.Grant{g("", storage.GrantAllow, 1)}, "http.request", "", connectors.ScopeHosts, func(*storage.Grant) (int, error) { return 0, boom })
		if !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
}

// A grant covers what it names however the call or the person spells it,
// and no more: a send naming several recipient domains is allowed only if
// each is (a grant for example.com carried mail to evil.com along when a
// sub-domain of example.com sorted last; a deny for evil.com was passed by
// naming another domain beside it), a file grant is not a domain's
// (notes.md took in journal/diary.notes.md), and a deny is not passed by
// case, a trailing dot or "./".
func TestAGrantIsNotStretchedNorADenyPassedBySpelling(t *testing.T) {
	t.Parallel()
	kinds := map[string]connectors.ScopeKind{"mail.send": connectors.ScopeHosts, "http.request": connectors.ScopeHosts,
		"files.write": connectors.ScopePath, "mail.move": connectors.ScopeName}
	g := func(capability, scope string, mode storage.GrantMode) storage.Grant {
		return storage.Grant{Capability: capability, Scope: scope, Mode: mode}
	}
	cases := []struct {
		name       string
		grants     []storage.Grant
		capability string
		scope      string
		mode       storage.GrantMode
	}{
		{"a domain's grant does not carry another domain along", []storage.Grant{g("mail.send", "example.com", storage.GrantAllow)},
			"mail.send", "evil.com,mail.example.com", storage.GrantAsk},
		{"a deny is not passed by naming another domain beside it", []storage.Grant{g("mail.send", "", storage.GrantAllow), g("mail.send", "evil.com", storage.GrantDeny)},
			"mail.send", "evil.com,zzz.org", storage.GrantAsk},
		{"a deny covers a sub-domain among several", []storage.Grant{g("mail.send", "", storage.GrantAllow), g("mail.send", "evil.com", storage.GrantDeny)},
			"mail.send", "a.org,x.evil.com", storage.GrantAsk},
		{"every domain granted is allowed", []storage.Grant{g("mail.send", "example.com", storage.GrantAllow), g("mail.send", "example.org", storage.GrantAllow)},
			"mail.send", "example.org,x.example.com", storage.GrantAllow},
		{"approve always for a send to two domains allows that send again", []storage.Grant{g("mail.send", "x.com,y.org", storage.GrantAllow)},
			"mail.send", "x.com,y.org", storage.GrantAllow},
		{"a file's grant is not a domain's", []storage.Grant{g("files.write", "notes.md", storage.GrantAllow)},
			"files.write", "journal/diary.notes.md", storage.GrantAsk},
		{"a folder's grant spelt ./docs/ covers its files", []storage.Grant{g("files.write", "./docs/", storage.GrantAllow)},
			"files.write", "docs/a.txt", storage.GrantAllow},
		{"a deny spelt in capitals", []storage.Grant{g("http.request", "", storage.GrantAllow), g("http.request", "Evil.COM", storage.GrantDeny)},
			"http.request", "api.evil.com", storage.GrantAsk},
		{"a deny against a host's absolute form", []storage.Grant{g("http.request", "", storage.GrantAllow), g("http.request", "evil.com", storage.GrantDeny)},
			"http.request", "evil.com.", storage.GrantAsk},
		{"a deny of a folder spelt ./secret/", []storage.Grant{g("files.write", "", storage.GrantAllow), g("files.write", "./secret/", storage.GrantDeny)},
			"files.write", "secret/a.txt", storage.GrantAsk},
		{"an allow is not stretched by case", []storage.Grant{g("files.write", "Notes", storage.GrantAllow)},
			"files.write", "notes/a.txt", storage.GrantAsk},
		// what a scope names is the method's word (connectors.ScopeKind),
		// not a guess from its text
		{"a file's grant is not a domain's, in the same folder", []storage.Grant{g("files.write", "notes.md", storage.GrantAllow)},
			"files.write", "diary.notes.md", storage.GrantAsk},
		{"a file with a comma in its name is in its granted folder", []storage.Grant{g("files.write", "docs", storage.GrantAllow)},
			"files.write", "docs/a,b.txt", storage.GrantAllow},
		{"a mailbox's grant is not its namesake's under another", []storage.Grant{g("mail.move", "Archive", storage.GrantAllow)},
			"mail.move", "INBOX.Archive", storage.GrantAsk},
		{"a mailbox's grant is not a mailbox below it", []storage.Grant{g("mail.move", "Archive", storage.GrantAllow)},
			"mail.move", "Archive/Secret", storage.GrantAsk},
		{"a grant for the root's folder spelt ./ covers what is below it", []storage.Grant{g("files.write", "./", storage.GrantAllow)},
			"files.write", "docs/a.txt", storage.GrantAllow},
		{"a grant for the root's folder does not cover what is above it", []storage.Grant{g("files.write", ".", storage.GrantAllow)},
			"files.write", "../a.txt", storage.GrantAsk},
		{"a host's grant covers its sub-domains however it is spelt", []storage.Grant{g("http.request", "Example.COM.", storage.GrantAllow)},
			"http.request", "api.example.com", storage.GrantAllow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := DecideGrant(c.grants, c.capability, c.scope, kinds[c.capability], nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.Mode != c.mode {
				t.Errorf("%s (%s) under %+v: %s %q, want %s", c.capability, c.scope, c.grants, v.Mode, v.Why, c.mode)
			}
		})
	}
}

// A deny is never outranked by an allow that only names more: which grant
// decides is worked out for each part of a call (a host, a path), by how
// narrowly the grant's own part covering it names it, and a deny at the
// same narrowness wins. An "approve always" of a send to x.com and y.org
// stored one allow "x.com,y.org", which, being the longer text, outranked a
// deny for x.com set before or after it, for a send to x.com alone too.
func TestADenyIsNotOutrankedByAnAllowNamingMore(t *testing.T) {
	t.Parallel()
	kinds := map[string]connectors.ScopeKind{"mail.send": connectors.ScopeHosts, "files.write": connectors.ScopePath}
	g := func(capability, scope string, mode storage.GrantMode) storage.Grant {
		return storage.Grant{Capability: capability, Scope: scope, Mode: mode}
	}
	combined := g("mail.send", "x.com,y.org", storage.GrantAllow)
	denyX := g("mail.send", "x.com", storage.GrantDeny)
	cases := []struct {
		name       string
		grants     []storage.Grant
		capability string
		scope      string
		mode       storage.GrantMode
	}{
		{"a combined allow does not pass a later deny for one of its domains", []storage.Grant{combined, denyX},
			"mail.send", "x.com", storage.GrantAsk},
		{"nor a deny set before it", []storage.Grant{denyX, combined},
			"mail.send", "x.com", storage.GrantAsk},
		{"nor when the send names both again", []storage.Grant{combined, denyX},
			"mail.send", "x.com,y.org", storage.GrantAsk},
		{"the other domain of the combined allow is still allowed", []storage.Grant{combined, denyX},
			"mail.send", "y.org", storage.GrantAllow},
		{"a deny of a domain covers its sub-domain against a combined allow", []storage.Grant{combined, denyX},
			"mail.send", "mail.x.com", storage.GrantAsk},
		{"an allow for a sub-domain is narrower than a deny of its domain", []storage.Grant{denyX, g("mail.send", "mail.x.com,y.org", storage.GrantAllow)},
			"mail.send", "mail.x.com", storage.GrantAllow},
		{"a deny of a sub-domain is narrower than an allow of its domain among others", []storage.Grant{combined, g("mail.send", "mail.x.com", storage.GrantDeny)},
			"mail.send", "y.org,mail.x.com", storage.GrantAsk},
		{"every domain allowed by its own grant is allowed beside an ask for all", []storage.Grant{g("mail.send", "", storage.GrantAsk),
			g("mail.send", "x.com", storage.GrantAllow), g("mail.send", "y.org", storage.GrantAllow)},
			"mail.send", "x.com,y.org", storage.GrantAllow},
		{"a file's allow is narrower than a deny of its folder", []storage.Grant{g("files.write", "published", storage.GrantDeny), g("files.write", "published/a.txt", storage.GrantAllow)},
			"files.write", "published/a.txt", storage.GrantAllow},
		{"a deny of a folder covers a file under it against an allow of its parent", []storage.Grant{g("files.write", "docs", storage.GrantAllow), g("files.write", "docs/private", storage.GrantDeny)},
			"files.write", "docs/private/a.txt", storage.GrantAsk},
		{"an allow of the same folder spelt longer does not outrank its deny", []storage.Grant{g("files.write", "published", storage.GrantDeny), g("files.write", "./published/", storage.GrantAllow)},
			"files.write", "published/a.txt", storage.GrantAsk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := DecideGrant(c.grants, c.capability, c.scope, kinds[c.capability], nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.Mode != c.mode {
				t.Errorf("%s (%s) under %+v: %s %q, want %s", c.capability, c.scope, c.grants, v.Mode, v.Why, c.mode)
			}
		})
	}
}
