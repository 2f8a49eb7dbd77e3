package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/engine/api"
)

// TestApprovalsSayWhatTheyCover: approving covers the call, always covers
// the scope the card showed (here the file), and a grant releases the
// calls already waiting that it allows, saying how many.
func TestApprovalsSayWhatTheyCover(t *testing.T) {
	t.Parallel()

	t.Run("approve without always covers this call only, and says so", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		if len(a) != 1 || a[0].Scope != "out.txt" {
			t.Fatalf("approvals = %+v, want one whose scope is out.txt", a)
		}
		r := e.ok("approve", a[0].ID)
		if !strings.Contains(r.stdout, "this call only") || !strings.Contains(r.stdout, "--always allows files.append for "+a[0].Scope) {
			t.Fatalf("approve says %q, want both answers named", r.stdout)
		}
		e.ok("drain")
		if got := attentionOf(e, api.AttentionApproval); len(got) != 1 {
			t.Fatalf("after approving once, approvals = %+v, want the next call asked again", got)
		}
	})

	t.Run("approve --always allows the file the card showed, not the whole capability", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		r := e.ok("approve", a[0].ID, "--always")
		if !strings.Contains(r.stdout, "always from now on: files.append for "+a[0].Scope) {
			t.Fatalf("approve --always says %q", r.stdout)
		}
		// the deploy's ask for files.append stays; the new allow is narrower
		grants := jsonOf[[]api.GrantView](e, "grants", "lines")
		if len(grants) != 2 || grants[0].Mode != "ask" || grants[0].Scope != "" || grants[1].Mode != "allow" || grants[1].Scope != a[0].Scope {
			t.Fatalf("grants = %+v, want files.append allowed for %s only", grants, a[0].Scope)
		}
		e.expect(2, "approve", a[0].ID, "--wide")
	})

	t.Run("approve --always --wide allows the whole capability", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		r := e.ok("approve", a[0].ID, "--always", "--wide")
		if !strings.Contains(r.stdout, "files.append, any scope") {
			t.Fatalf("approve --always --wide says %q", r.stdout)
		}
		grants := jsonOf[[]api.GrantView](e, "grants", "lines")
		if len(grants) != 1 || grants[0].Mode != "allow" || grants[0].Scope != "" {
			t.Fatalf("grants = %+v, want files.append allowed in any scope", grants)
		}
	})

	t.Run("grant releases the approvals already waiting that it allows", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		if a := attentionOf(e, api.AttentionApproval); len(a) != 1 {
			t.Fatalf("approvals = %+v, want one waiting", a)
		}
		r := e.ok("grant", "lines", "files.append")
		if !strings.Contains(r.stdout, "released 1 waiting approval") {
			t.Fatalf("grant says %q, want the released approval counted", r.stdout)
		}
		if a := attentionOf(e, api.AttentionApproval); len(a) != 0 {
			t.Fatalf("after the grant, approvals = %+v, want none", a)
		}
		e.ok("drain")
		if got := e.read("out.txt"); got != "a.txt\nb.txt\n" && got != "b.txt\na.txt\n" {
			t.Fatalf("out.txt = %q, want both lines without an approval", got)
		}
	})
}

// TestReadmeSaysWhatAnApprovalCovers: once is this call, always is a scope.
func TestReadmeSaysWhatAnApprovalCovers(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := section(t, string(b), "A first workflow")
	if strings.Contains(first, "until you approve it once") {
		t.Error("the README still says one approval stops the asking")
	}
	for _, want := range []string{"this call", "always, for this scope", "--always", "releases the approvals already waiting"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first workflow does not say %q", want)
		}
	}
}
