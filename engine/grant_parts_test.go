package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// moveWorkflow moves each of moves' files, [from, to], one call each.
func moveWorkflow(moves ...[2]string) string {
	list, _ := json.Marshal(moves)
	return strings.ReplaceAll(`
export default Keep.workflow({
  name: "mover",
  topics: { move: {} },
  producers: { feed: { publishes: ["move"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const [from, to] of MOVES) {
      const inputId = ctx.registerInput({ source: "files", type: "file", id: from, title: from });
      await ctx.publish("move", { messageId: from, inputId, payload: { from, to } });
    }
  } } },
  consumers: { mover: Keep.consumer({
    subscribe: ["move"],
    async prepare(ctx) {
      const [e] = await ctx.peek("move", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "move", ids: [e.messageId] }], data: e.payload };
    },
    async mutate(ctx, p) { await ctx.files.move({ from: p.data.from, to: p.data.to }); },
    async next() {},
  }) },
});`, "MOVES", string(list))
}

// A move touches two places, and is allowed only where each of them is: a
// grant for files.move on inbox let a workflow move a file from inbox over
// any path in the roots (its scope was the source alone), and a deny on
// the destination was never asked. Approve always allows the two places
// the card showed, each by its own grant, and never turns a deny around.
func TestAMoveIsAllowedOnlyWhereBothEndsAre(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	grant := func(b *bundle, gs ...api.GrantView) {
		t.Helper()
		for _, g := range gs {
			if err := b.e.Grant(ctx, "mover", g); err != nil {
				t.Fatal(err)
			}
		}
	}
	move := func(scope string, mode GrantMode) api.GrantView {
		return api.GrantView{Capability: "files.move", Scope: scope, Mode: mode}
	}
	applied := func(b *bundle) int {
		t.Helper()
		ms, err := b.e.Mutations(ctx, "mover", "applied")
		if err != nil {
			t.Fatal(err)
		}
		return len(ms)
	}
	scopes := func(b *bundle) []string {
		t.Helper()
		gs, err := b.e.Grants(ctx, "mover")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gs {
			if g.Capability == "files.move" {
				out = append(out, string(g.Mode)+" "+g.Scope)
			}
		}
		slices.Sort(out)
		return out
	}

	t.Run("a grant on the source's folder does not let the file go elsewhere", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "a")
		b.deploy("mover", moveWorkflow([2]string{"inbox/a.txt", "outbox/important.txt"}))
		grant(b, move("inbox", GrantAllow))
		b.drain()
		if n := applied(b); n != 0 || b.read("inbox/a.txt") != "a" {
			t.Fatalf("applied %d: inbox/a.txt was moved to outbox under a grant for inbox alone", n)
		}
		att, _ := b.e.Attention(ctx)
		// the call's places, and what "always" would allow: the source
		// under the grant that covers it already, the destination itself
		if len(att) != 1 || att[0].Target != "inbox/a.txt and outbox/important.txt" || att[0].Scope != "inbox and outbox/important.txt" {
			t.Fatalf("attention = %+v, want the move asked, both places shown", att)
		}
	})

	t.Run("a deny on the destination holds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "a")
		b.deploy("mover", moveWorkflow([2]string{"inbox/a.txt", "published/a.txt"}))
		grant(b, move("", GrantAllow), move("published", GrantDeny))
		b.drain()
		if n := applied(b); n != 0 {
			t.Fatalf("applied %d: a file was moved into a denied folder", n)
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || !strings.Contains(att[0].Reason, "your grant denies files.move (published)") {
			t.Fatalf("attention = %+v, want the move waiting on the deny", att)
		}
	})

	t.Run("grants on both ends allow it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "a")
		b.deploy("mover", moveWorkflow([2]string{"inbox/a.txt", "done/a.txt"}))
		grant(b, move("inbox", GrantAllow), move("done", GrantAllow))
		b.drain()
		if n := applied(b); n != 1 || b.read("done/a.txt") != "a" {
			t.Fatalf("applied %d, want the move made", n)
		}
	})

	t.Run("approve always allows each place the card showed, and no more", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "a")
		b.write("inbox/b.txt", "b")
		b.deploy("mover", moveWorkflow([2]string{"inbox/a.txt", "done/a.txt"}, [2]string{"inbox/b.txt", "done/a.txt.bak"}))
		b.drain()
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 {
			t.Fatalf("attention = %+v, want the first move asked", att)
		}
		if want := "inbox/a.txt and done/a.txt"; att[0].Scope != want {
			t.Fatalf("the card's always scope is %q, want %q", att[0].Scope, want)
		}
		if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if got, want := scopes(b), []string{"allow done/a.txt", "allow inbox/a.txt", "ask "}; !slices.Equal(got, want) {
			t.Fatalf("files.move grants = %q, want %q", got, want)
		}
		if n := applied(b); n != 1 {
			t.Fatalf("applied %d, want the approved move alone (the second asks)", n)
		}
	})

	t.Run("approve always leaves a denied place denied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write("inbox/a.txt", "a")
		b.write("inbox/b.txt", "b")
		b.deploy("mover", moveWorkflow([2]string{"inbox/a.txt", "published/a.txt"}, [2]string{"inbox/b.txt", "published/b.txt"}))
		grant(b, move("published/a.txt", GrantDeny))
		b.drain()
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 {
			t.Fatalf("attention = %+v, want the first move asked", att)
		}
		// the card promises what "always" stores, and no more
		if want := "inbox/a.txt (published/a.txt stays denied)"; att[0].Scope != want {
			t.Fatalf("the card's always scope is %q, want %q", att[0].Scope, want)
		}
		if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if n := applied(b); n != 1 || b.read("published/a.txt") != "a" {
			t.Fatalf("applied %d, want the approved call made: approving answers this call", n)
		}
		if got, want := scopes(b), []string{"allow inbox/a.txt", "ask ", "deny published/a.txt"}; !slices.Equal(got, want) {
			t.Fatalf("files.move grants = %q, want %q: the deny kept, the other place allowed", got, want)
		}
	})
}

// Approving a call a deny holds answers that call: "always" stored an
// allow with the call's scope, which, the deny's own scope being the same,
// overwrote the deny, and every later call to the denied host went out.
func TestApproveAlwaysDoesNotTurnADenyAround(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a", "b"))
	if err := b.e.Grant(ctx, "push", api.GrantView{Capability: "http.request", Scope: "127.0.0.1", Mode: GrantDeny}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	att, _ := b.e.Attention(ctx)
	if len(att) != 1 {
		t.Fatalf("attention = %+v, want the first call asked", att)
	}
	if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := len(b.mutationsBy("applied")); got != 1 {
		t.Fatalf("applied %d, want the approved call alone", got)
	}
	att, _ = b.e.Attention(ctx)
	if len(att) != 1 || !strings.Contains(att[0].Reason, "your grant denies http.request (127.0.0.1)") {
		t.Fatalf("attention = %+v, want the second call waiting on the deny", att)
	}
}

// An "approve always" stores one allow for each part of the call's scope,
// none where a deny of the person's covers it, and the narrowness of each
// is that of what it names: a send to x.com and y.org stored one allow
// "x.com,y.org", which outranked a deny for x.com set before or after it.
func TestApproveAlwaysStoresAGrantForEachPart(t *testing.T) {
	t.Parallel()
	g := func(scope string, mode GrantMode) storage.Grant {
		return storage.Grant{WorkflowID: 1, Capability: "mail.send", Scope: scope, Mode: mode}
	}
	cases := []struct {
		name   string
		grants []storage.Grant
		scope  string
		wide   bool
		add    []string
		denied []string
	}{
		{"one grant for each domain", []storage.Grant{g("", GrantAsk)}, "x.com,y.org", false, []string{"x.com", "y.org"}, nil},
		{"none for a domain a deny holds", []storage.Grant{g("", GrantAsk), g("x.com", GrantDeny)}, "x.com,y.org", false, []string{"y.org"}, []string{"x.com"}},
		{"none for a sub-domain of a denied domain", []storage.Grant{g("X.com.", GrantDeny)}, "mail.x.com", false, nil, []string{"mail.x.com"}},
		{"wide, none over a deny for all", []storage.Grant{g("", GrantDeny)}, "x.com,y.org", true, nil, []string{"x.com", "y.org"}},
		{"wide, the whole capability beside a domain denied", []storage.Grant{g("", GrantAsk), g("x.com", GrantDeny)}, "x.com,y.org", true, []string{""}, []string{"x.com"}},
		{"a domain allowed by a wider grant gets that grant again, not a narrower one", []storage.Grant{g("org", GrantAllow)}, "x.com,y.org", false, []string{"x.com", "org"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			add, denied := alwaysGrants(c.grants, 1, "mail.send", c.scope, connectors.ScopeHosts, c.wide)
			var scopes []string
			for _, a := range add {
				if a.Mode != GrantAllow || a.Capability != "mail.send" || a.WorkflowID != 1 {
					t.Errorf("grant %+v, want an allow of mail.send for the workflow", a)
				}
				scopes = append(scopes, a.Scope)
			}
			if !slices.Equal(scopes, c.add) || !slices.Equal(denied, c.denied) {
				t.Errorf("stores %q, leaves out %q; want %q, %q", scopes, denied, c.add, c.denied)
			}
		})
	}
	// what they store decides as the test above says: the deny for x.com
	// still holds after an approve always of a send to x.com and y.org
	grants := []storage.Grant{g("", GrantAsk), g("x.com", GrantDeny)}
	add, _ := alwaysGrants(grants, 1, "mail.send", "x.com,y.org", connectors.ScopeHosts, false)
	grants = append(grants, add...)
	for scope, want := range map[string]GrantMode{"x.com": GrantAsk, "x.com,y.org": GrantAsk, "y.org": GrantAllow, "a.y.org": GrantAllow} {
		if v, _ := ledger.DecideGrant(grants, "mail.send", scope, connectors.ScopeHosts, nil); v.Mode != want {
			t.Errorf("after approve always, a send to %s: %s %q, want %s", scope, v.Mode, v.Why, want)
		}
	}
}
