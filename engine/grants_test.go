package engine

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
)

func TestGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	cases := []struct {
		name    string
		grant   api.GrantView
		applied int    // of two items
		reason  string // of the approval the rest waits on
	}{
		{"a grant for the call's host allows it", api.GrantView{Capability: "http.request", Scope: "127.0.0.1", Mode: "allow"}, 2, ""},
		{"a grant for another host does not", api.GrantView{Capability: "http.request", Scope: "example.com", Mode: "allow"}, 0, "asks before each call"},
		{"a daily limit asks past the limit", api.GrantView{Capability: "http.request", Mode: "allow", DailyLimit: 1}, 1, "past its limit of 1 a day"},
		{"deny waits for the user instead of failing", api.GrantView{Capability: "http.request", Mode: "deny"}, 0, "denies http.request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			s := newSink(t)
			b.deploy("push", pushWorkflow(s.URL, "a", "b"))
			if err := b.e.Grant(ctx, "push", c.grant); err != nil {
				t.Fatal(err)
			}
			b.drain()
			if got := len(b.mutationsBy("applied")); got != c.applied {
				t.Fatalf("applied %d, want %d", got, c.applied)
			}
			if c.reason == "" {
				return
			}
			att, _ := b.e.Attention(ctx)
			if len(att) != 1 || att[0].Kind != api.AttentionApproval || !strings.Contains(att[0].Reason, c.reason) {
				t.Fatalf("attention = %+v, want an approval because %q", att, c.reason)
			}
		})
	}

	t.Run("approve always allows the calls after it in the call's scope", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a", "b"))
		b.drain()
		att, _ := b.e.Attention(ctx)
		if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if got := len(b.mutationsBy("applied")); got != 2 {
			t.Fatalf("applied %d, want both (the second without asking)", got)
		}
		grants, _ := b.e.Grants(ctx, "push")
		if len(grants) != 2 || grants[1].Mode != "allow" || grants[1].Scope != "127.0.0.1" || !grants[1].Used {
			t.Fatalf("grants = %+v, want http.request allowed for the sink's host", grants)
		}
	})

	t.Run("approve always leaves a call to another host asking", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		other := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
		src := strings.Replace(pushWorkflow(s.URL, "a", "b"), `url: "`+s.URL+`" + "/items", json`,
			`url: (p.data.id === "b" ? "`+other+`" : "`+s.URL+`") + "/items", json`, 1)
		if src == pushWorkflow(s.URL, "a", "b") {
			t.Fatal("the workflow was not rewritten")
		}
		b.deploy("push", src)
		b.drain()
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Scope != "127.0.0.1" {
			t.Fatalf("attention = %+v, want one approval for 127.0.0.1", att)
		}
		if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
			t.Fatal(err)
		}
		b.drain()
		att, _ = b.e.Attention(ctx)
		if len(att) != 1 || att[0].Scope != "localhost" {
			t.Fatalf("attention = %+v, want the call to localhost asked", att)
		}
		if err := b.e.ApproveWide(ctx, att[0].ID); err != nil {
			t.Fatal(err)
		}
		grants, _ := b.e.Grants(ctx, "push")
		if g := grants[0]; g.Scope != "" || g.Mode != "allow" {
			t.Fatalf("grants = %+v, want the whole capability allowed once asked wider", grants)
		}
	})

	t.Run("a grant releases the approval already waiting that it allows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a", "b"))
		b.drain()
		n, err := b.e.GrantReleasing(ctx, "push", api.GrantView{Capability: "http.request", Scope: "example.com"})
		if err != nil || n != 0 {
			t.Fatalf("a grant for another host released %d (%v), want none", n, err)
		}
		n, err = b.e.GrantReleasing(ctx, "push", api.GrantView{Capability: "http.request", Scope: "127.0.0.1"})
		if err != nil || n != 1 {
			t.Fatalf("released %d (%v), want the waiting one", n, err)
		}
		b.drain()
		if got := len(b.mutationsBy("applied")); got != 2 {
			t.Fatalf("applied %d, want both without an answer", got)
		}
	})

	t.Run("approve always past a daily limit approves the call and keeps the limit", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a", "b", "c"))
		if err := b.e.Grant(ctx, "push", api.GrantView{Capability: "http.request", Mode: "allow", DailyLimit: 1}); err != nil {
			t.Fatal(err)
		}
		b.drain()
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || !strings.Contains(att[0].Reason, "past its limit of 1 a day") {
			t.Fatalf("attention = %+v, want the second call asked past the limit", att)
		}
		if err := b.e.Approve(ctx, att[0].ID, true); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if got := len(b.mutationsBy("applied")); got != 2 {
			t.Fatalf("applied %d, want the first and the approved one", got)
		}
		grants, _ := b.e.Grants(ctx, "push")
		if len(grants) != 1 || grants[0].Mode != "allow" || grants[0].DailyLimit != 1 {
			t.Fatalf("grants = %+v, want the limit of 1 a day kept", grants)
		}
		att, _ = b.e.Attention(ctx)
		if len(att) != 1 || !strings.Contains(att[0].Reason, "past its limit of 1 a day") {
			t.Fatalf("attention = %+v, want the third call asked past the limit still", att)
		}
	})

	t.Run("a grant names a mutation capability of a known connector", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("notes", notesWorkflow)
		for _, g := range []api.GrantView{{Capability: "files.read"}, {Capability: "fax.send"}, {Capability: "files"}, {Capability: "files.write", Mode: "maybe"}} {
			if err := b.e.Grant(ctx, "notes", g); err == nil {
				t.Errorf("grant %+v was accepted", g)
			}
		}
	})
}
