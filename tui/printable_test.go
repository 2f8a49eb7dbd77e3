package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"

	"keep/engine/api"
)

// plantingWorkflow and throwingPlanter plant terminal control sequences in
// everything a script reaches (see the files' comments).
var (
	plantingWorkflow = readTestdata("printable/testdata/planter.js")
	throwingPlanter  = readTestdata("printable/testdata/thrower.js")
)

func readTestdata(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// driving lists the sequences of evil found raw in a rendered screen, and
// the characters that hide or reorder text (every format character, the
// line and paragraph separators). The screen's own styling (bold, colour:
// ESC [ … m) is keep's and allowed.
func driving(screen string) []string {
	var found []string
	for _, seq := range []string{"\x1b[2J", "\x1b]", "\x07", "\x1b[1A", "\x1b[2K", "\u009b", "\x7f"} {
		if strings.Contains(screen, seq) {
			found = append(found, seq)
		}
	}
	for _, r := range screen {
		if unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) || r == '\u2028' || r == '\u2029' {
			found = append(found, fmt.Sprintf("%U", r))
		}
	}
	return found
}

func TestScriptTextCannotDriveTheTerminalFromTheTUI(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Deploy("planter", []byte(plantingWorkflow))
	r.Deploy("thrower", []byte(throwingPlanter))
	r.Drain()
	h := r.harness(r.API, 220, 60) // wide enough that no planted line wraps

	var screens []string
	look := func(what string) {
		t.Helper()
		s := h.screen()
		if found := driving(s); len(found) > 0 {
			t.Errorf("%s: the screen has raw %q:\n%s", what, found, s)
		}
		screens = append(screens, s)
	}
	look("first screen")
	for i := range 2 {
		h.keys("1", "g")
		for range i {
			h.keys("j")
		}
		name := h.m.wf.Selected().Name
		look("workflows, " + name)
		h.keys("2")
		look("inputs of " + name)
		h.keys("enter")
		look("an input of " + name + " opened")
		h.keys("4", "g")
		look("runs of " + name)
		for j := range len(h.m.rn.items) {
			h.keys("g")
			for range j {
				h.keys("j")
			}
			h.keys("enter")
			look("a trace of " + name)
			h.keys("esc")
		}
		h.keys("1", "R")
		look("run now on " + name)
	}
	h.keys("3", "g")
	for range len(h.m.at.all) {
		look("attention")
		h.keys("enter")
		look("attention opened")
		h.keys("j")
	}
	h.send(notifyMsg(api.Notification{Kind: "changed", Workflow: "planter", Text: "note \x1b]52;c;aGk=\x07\x1b[2J"}))
	look("a notification")

	all := strings.Join(screens, "\n")
	for _, want := range []string{`\x1b]52;c;`, `title \x1b[2J`, `approve \x1b[2J`, `error \x1b[2J`, `log \x1b[2J`, `\u009b31m\x7f`, `\u202e\u2066\u200b\u061c\ufeff\u2028\u00ad\U000e0041`} {
		if !strings.Contains(all, want) {
			t.Errorf("no screen shows %q: the text must be shown escaped, not dropped", want)
		}
	}
}
