package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// hidingWorkflow writes text whose width the two ways of counting
// disagree on: a Thai ก followed by many ำ is one grapheme cluster, one
// cell wide to lipgloss, and a cell per code point to tmux, xterm and
// Bubble Tea's renderer beside them; a skin tone after an emoji is two
// cells or four. What follows such text in a title, an input or an
// argument must still be on screen.
const hidingWorkflow = `
const H = "\u0e01" + "\u0e33".repeat(60);
export default Keep.workflow({
  name: "hide",
  topics: { "h.x": {} },
  producers: {
    scan: { publishes: ["h.x"], schedule: { interval: "1h" }, handler: async (ctx) => {
      const inputId = ctx.registerInput({ source: "files", type: "file", id: "h1", title: "Input " + H + " INPUT-TAIL" });
      await ctx.publish("h.x", { messageId: "h1", inputId, payload: {} });
    } },
  },
  consumers: {
    c: Keep.consumer({ subscribe: ["h.x"],
      async prepare(ctx) { const [e] = await ctx.peek("h.x", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "h.x", ids: [e.messageId] }], data: {},
                 ui: { title: "Note " + H + " TITLE-TAIL \u{1F44D}\u{1F3FD}\u{1F44D}\u{1F3FD}\u{1F44D}\u{1F3FD}" } }; },
      async mutate(ctx, p) {
        await ctx.files.write({ path: "out/h.txt", content: "\u0e01" + "\u0e33".repeat(40) + " MEMO-TAIL" });
      },
      async next() {} }),
  },
});
`

// pastTheEdge is what of a screen line lies beyond w cells counted one
// way (cut) or the other, once the frame and blanks are taken away: a
// renderer cuts a line there, so this is text nobody sees.
func pastTheEdge(line string, w int) string {
	rest := ansi.Strip(ansi.TruncateLeft(line, w, "")) + ansi.Strip(ansi.TruncateLeftWc(line, w, ""))
	return strings.Trim(rest, " │╮╯╰╭─")
}

func TestTextIsInsideTheScreenWhicheverWayItsWidthIsCounted(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		r := newRealEngine(t)
		r.Deploy("hide", []byte(hidingWorkflow))
		r.Drain()
		h := r.harness(r.API, size[0], size[1])
		look := func(what string, tails ...string) {
			t.Helper()
			s := h.screen()
			for i, l := range strings.Split(s, "\n") {
				if rest := pastTheEdge(l, size[0]); rest != "" {
					t.Errorf("%dx%d %s: line %d has %q past the screen's edge:\n%s", size[0], size[1], what, i, rest, s)
				}
			}
			for _, tail := range tails {
				if !strings.Contains(s, tail) {
					t.Errorf("%dx%d %s: %s is not on screen:\n%s", size[0], size[1], what, tail, s)
				}
			}
		}
		h.keys("3")
		look("the card", "MEMO-TAIL")
		h.keys("enter")
		look("the card opened", "TITLE-TAIL", "MEMO-TAIL")
		h.keys("2")
		look("the inputs")
		h.keys("enter")
		look("the input opened")
	}
}

// However narrow the terminal, no line of the screen is wider than it
// (a renderer cuts it: the box's frame and what it says go), and the
// screen is no taller than it.
func TestEveryLineFitsANarrowTerminal(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Write("inbox/a.txt", "alpha")
	r.Deploy("notes", []byte(copyWorkflow))
	r.Drain()
	for w := 1; w <= 16; w++ {
		for _, hgt := range []int{5, 12} {
			h := r.harness(r.API, w, hgt)
			for _, keys := range [][]string{{}, {"3"}, {"2"}, {"4"}, {"3", "enter"}, {"?"}} {
				h.keys(keys...)
				lines := strings.Split(h.screen(), "\n")
				if len(lines) > hgt {
					t.Errorf("%dx%d after %v: %d lines", w, hgt, keys, len(lines))
				}
				for i, l := range lines {
					if rest := pastTheEdge(l, w); rest != "" {
						t.Errorf("%dx%d after %v: line %d has %q past the edge", w, hgt, keys, i, rest)
						break
					}
				}
			}
		}
	}
}
