package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"keep/engine"
)

// At 80x24, without colour, in every pane: the selected row is marked in
// text; ? lists every key of the pane, the ones the selection does not
// take now in parentheses; the tab strip, the help bar and ? fit.

func eightyStub() accountsStub {
	return accountsStub{stubAPI: newStub(), accounts: []engine.AccountView{
		{Name: "google", Kind: "oauth2", Provider: "google", Username: "me@gmail.com", State: engine.AccountOK},
		{Name: "fastmail", Kind: "password", State: engine.AccountNeedsSignIn, Detail: "run keep auth login fastmail"},
	}}
}

func TestSelectionAndHelpAt80(t *testing.T) {
	t.Parallel()
	panes := []struct {
		key, name string
		marked    string // the selected row's first line, marked
		want      []string
	}{
		{"1", "Workflows", "│ > ▲ email-to-sheets", []string{"R", "p", "d", "/", "enter", "esc"}},
		{"2", "Inputs", "│ > ▲ Email from alice", []string{"S", "R", "p", "/", "enter", "esc"}},
		{"3", "Attention", "│ > APPROVAL", []string{"a", "A", "x", "r", "c", "h", "f", "s", "S", "/", "enter", "esc"}},
		{"4", "Run log", "│ > #14", []string{"r", "R", "p", "/", "enter", "esc"}},
		{"5", "Accounts", "│ > ● google", []string{"R", "p", "/", "esc"}},
	}
	for _, p := range panes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, eightyStub(), 80, 24)
			h.keys(p.key)
			sc := ansi.Strip(h.screen())
			fits(t, sc)
			if !strings.Contains(sc, p.marked) {
				t.Errorf("the selected row is not marked in text (want %q):\n%s", p.marked, sc)
			}
			if n := strings.Count(sc, "│ > "); n != 1 {
				t.Errorf("%d rows marked, want 1:\n%s", n, sc)
			}
			lines := strings.Split(sc, "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, "? help") || !strings.Contains(last, "q quit") {
				t.Errorf("the help bar lost ? or q: %q", last)
			}

			h.keys("?")
			sc = h.screen()
			fits(t, sc)
			help := helpOf(h, sc)
			for _, k := range p.want {
				if !helpNames(help, k) {
					t.Errorf("? does not list %s:\n%s", k, help)
				}
			}
			if !strings.Contains(help, "in parentheses") {
				t.Errorf("? does not say what parentheses mean:\n%s", help)
			}
			// another pane's answers are not listed as this pane's keys
			if p.key == "1" && helpNames(help, "a") {
				t.Errorf("the Workflows pane's ? lists approve:\n%s", help)
			}
			for _, k := range []string{"tab", "?", "q"} {
				if !helpNames(help, k) {
					t.Errorf("? lost %s:\n%s", k, help)
				}
			}
			// moving between panes under ? keeps 24 lines
			h.keys("tab")
			fits(t, h.screen())
		})
	}

	t.Run("a key the selection does not take is listed in parentheses and does nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, eightyStub(), 80, 24)
		h.keys("3", "?")
		help := helpOf(h, h.screen())
		if !strings.Contains(help, "S (skip input)") || !strings.Contains(help, "a approve") {
			t.Fatalf("want S (skip input) beside a approve:\n%s", help)
		}
		if h.m.sh.keys.SkipInput.Enabled() {
			t.Fatal("listing S switched it on")
		}
	})
}

// helpNames says whether the help shows key k as a key (followed by its
// description, plain or in parentheses).
func helpNames(help, k string) bool {
	for _, l := range strings.Split(help, "\n") {
		for _, f := range strings.Split(l, "  ") {
			if f = strings.TrimSpace(f); f == k || strings.HasPrefix(f, k+" ") {
				return true
			}
		}
	}
	return false
}

// helpOf is what ? shows, below the pane, without its styles.
func helpOf(h *harness, sc string) string {
	l := lines24(ansi.Strip(sc))
	return strings.Join(l[len(l)-h.m.fullHelpRows()-notNowLines:], "\n")
}

func lines24(sc string) []string { return strings.Split(sc, "\n") }

// fits fails unless sc is 24 lines of at most 80 cells, none cut with "…".
func fits(t *testing.T, sc string) {
	t.Helper()
	lines := lines24(sc)
	if len(lines) != 24 {
		t.Fatalf("%d lines, want 24:\n%s", len(lines), sc)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d cells: %q", i, w, l)
		}
	}
	for _, i := range []int{1, 22, 23} {
		if strings.Contains(ansi.Strip(lines[i]), "…") {
			t.Errorf("line %d is cut: %q", i, lines[i])
		}
	}
}
