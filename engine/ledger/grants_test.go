package ledger

import (
	"errors"
	"strings"
	"testing"

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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := DecideGrant(c.grants, "http.request", c.scope, c.today)
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
		_, err := DecideGrant([]storage.Grant{g("", storage.GrantAllow, 1)}, "http.request", "", func(*storage.Grant) (int, error) { return 0, boom })
		if !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
}
