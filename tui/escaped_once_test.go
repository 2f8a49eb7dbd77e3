package tui

import (
	"context"
	"strings"
	"testing"

	"keep/tui/printable"
)

// An argument's value is JSON text, so a control character in it reads as
// JSON writes it (\u001b), once: the card and `keep attention ID` agree.
// Before, the TUI escaped the parameters for display (\x1b) and then wrote
// them as JSON again, so a card showed "\\x1b".
func TestAnArgumentIsEscapedOnceAndAsTheCLIShowsIt(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Deploy("planter", []byte(plantingWorkflow))
	r.Drain()

	items, err := r.API.Attention(context.Background())
	if err != nil || len(items) != 1 {
		t.Fatalf("attention = %d items, %v; want the planter's approval", len(items), err)
	}
	var cli strings.Builder
	pw := printable.NewWriter(&cli)
	if err := WriteAttentionItems(pw, items, 400); err != nil {
		t.Fatal(err)
	}
	pw.Flush()
	const want = `content: "param \u001b[2J\u001b]0;pwned\u0007`
	if !strings.Contains(cli.String(), want) {
		t.Fatalf("the CLI does not show %s:\n%s", want, cli.String())
	}

	h := r.harness(r.API, 400, 60)
	h.keys("3", "g", "enter")
	card := h.m.at.View()
	if !strings.Contains(card, want) {
		t.Errorf("the opened card does not show %s as the CLI does:\n%s", want, card)
	}
	for _, twice := range []string{`\\x1b`, `\\u001b`, `\\u009b`, `\\x7f`} {
		if strings.Contains(card, twice) {
			t.Errorf("the card shows %s: escaped twice\n%s", twice, card)
		}
	}
	if found := driving(card); len(found) > 0 {
		t.Errorf("the card has raw %q", found)
	}
}
