package tui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/tui/printable"
)

// The command line's `keep attention` and `keep mutations`: one block per
// item, the script's title and the host's call each on a labelled line,
// every value wrapped to the width with a hanging indent and never cut, so
// what a person approves from the shell is what they read.

// cliLabelW is the width of a block's labels ("title (script)  ").
const cliLabelW = 16

type block struct {
	w     io.Writer
	width int
	err   error
}

// line writes label and the lines of text beside it, escaped first so
// the wrap measures what is printed. Text a script wrote is passed flattened
// to one line (oneLine), so it cannot draw a label of its own.
func (b *block) line(label string, text ...string) {
	w := max(b.width-2-cliLabelW, 20)
	first := true
	for _, t := range text {
		for _, l := range wrapAll(printable.String(t), w) {
			lab := ""
			if first {
				lab = label
			}
			first = false
			b.printf("  %-*s%s\n", cliLabelW, lab, l)
		}
	}
}

func (b *block) printf(format string, args ...any) {
	if b.err == nil {
		_, b.err = fmt.Fprintf(b.w, format, args...)
	}
}

// head is a block's first line: what it is and how to name it.
func (b *block) head(parts ...string) {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	for _, l := range wrapAll(printable.String(strings.Join(kept, " · ")), max(b.width, 20)) {
		b.printf("%s\n", l)
	}
}

// call writes the host-observed call under the label "call (host)", keep's
// own fields of it last, each saying so; room and all as
// callLines', more where the arguments a listing leaves out are.
func (b *block) call(c callView, room, limit int, more string) {
	lines, own := callLines(c, 1<<20, room, limit, more)
	if len(lines) > 0 {
		b.line("call (host)", lines...)
	}
	if len(own) > 0 {
		b.line("", own...)
	}
}

// proposal writes a proposal's summary and dry run, and its diff whole or
// (in a listing) how long it is and where it is, as they are (a diff's
// indentation is meaning), each line escaped, and how to answer it.
func (b *block) proposal(it api.AttentionItem, whole bool) {
	words, diff := engine.SplitProposalText(it.Preview)
	text := words
	if whole {
		text = it.Preview
	}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.printf("    %s\n", printable.String(l))
	}
	if d := strings.TrimRight(diff, "\n"); !whole && d != "" {
		b.line("diff", fmt.Sprintf("%d lines: keep attention %s shows it", strings.Count(d, "\n")+1, it.ID))
	}
	b.line("answer", "keep approve "+it.ID+" accepts it, keep reject "+it.ID+" drops it")
}

// WriteAttention writes `keep attention` for a terminal width wide: each
// call's arguments named, values cut to engine.ArgumentRoom with the bytes
// not shown counted; a proposal's summary without its diff.
func WriteAttention(w io.Writer, items []api.AttentionItem, width int) error {
	return writeAttention(w, items, width, false)
}

// WriteAttentionItems writes `keep attention ID`: the items whole, every
// argument and a proposal's diff.
func WriteAttentionItems(w io.Writer, items []api.AttentionItem, width int) error {
	return writeAttention(w, items, width, true)
}

func writeAttention(w io.Writer, items []api.AttentionItem, width int, whole bool) error {
	b := &block{w: w, width: width}
	room, limit := api.ArgumentRoom, listedArguments
	if whole {
		room, limit = 0, 0
	}
	for i, it := range items {
		if i > 0 {
			b.printf("\n")
		}
		b.head(string(it.Kind), it.Workflow, it.ID)
		label := "title"
		if it.Connector != "" {
			label = "title (script)"
		}
		b.line(label, oneLine(it.Title))
		if it.Kind == api.AttentionProposal {
			if it.Reason != "" {
				b.line("why", oneLine(it.Reason))
			}
			b.proposal(it, whole)
			continue
		}
		b.call(callView{it.Connector, it.Method, it.Target, it.Preview, it.Params}, room, limit,
			"keep attention "+it.ID+" shows every one")
		if it.Reason != "" {
			b.line("why", oneLine(it.Reason))
		}
		b.answered(it, whole)
		if it.Check != "" {
			b.line("check by hand", oneLine(it.Check))
		}
		if len(it.Inputs) > 0 {
			b.line("because of", oneLine(strings.Join(it.Inputs, "; ")))
		}
		switch {
		case it.Command != "":
			b.line("fix", "run: "+it.Command)
		case len(it.Answers) > 0:
			b.line("answers", strings.Join(it.Answers, ", "))
		}
		if as := workflowAnswers(it); as != "" {
			b.line("answer as", as)
		}
	}
	return b.err
}

// answered writes what was answered before about an item's call, oldest
// first, each with the attempt it answered, in the card's words
// (answerText): a call asked again reads as the same question asked anew. A listing
// keeps the newest shownAnswers, as keep status does; the item alone has
// them all.
func (b *block) answered(it api.AttentionItem, whole bool) {
	as, earlier := it.Answered, 0
	if !whole {
		earlier, as = latestAnswers(as, shownAnswers)
	}
	if earlier > 0 {
		b.line("answered", earlierText(earlier, "keep attention "+it.ID))
	}
	for _, a := range as {
		b.line("answered", answerText(a)+" at "+cliTime(a.At))
	}
}

// workflowAnswers is the retry and resume a person can type for it,
// naming the block it shows (WORKFLOW@N): typed after that block is
// answered and another stands, it is refused, not applied to that one.
func workflowAnswers(it api.AttentionItem) string {
	var cmds []string
	for _, a := range it.Answers {
		if (a == "retry" || a == "resume") && it.Workflow != "" {
			cmds = append(cmds, "keep "+a+" "+it.WorkflowAnswerID())
		}
	}
	return strings.Join(cmds, ", ")
}

// WriteMutations writes `keep mutations` for a terminal width wide.
func WriteMutations(w io.Writer, ms []api.MutationView, width int) error {
	b := &block{w: w, width: width}
	for i, m := range ms {
		if i > 0 {
			b.printf("\n")
		}
		b.head(m.ID, string(m.Status), "run "+m.RunID, cliTime(m.UpdatedAt))
		if m.UITitle != "" {
			b.line("title (script)", oneLine(m.UITitle))
		}
		b.call(callView{m.Connector, m.Method, m.Target, m.Preview, m.Params}, api.ArgumentRoom, listedArguments,
			"keep mutations --json has every one")
		switch {
		case m.Error != "":
			b.line("error", oneLine(m.Error))
		case len(m.Result) > 0 && string(m.Result) != "null":
			b.line("result", clipped(oneLine(jsonShown(m.Result)), resultMax))
		}
		for _, a := range m.Answers {
			b.line("answered", answerText(a)+" at "+cliTime(a.At))
		}
		if m.ResolvedBy != "" {
			b.line("resolved by", m.ResolvedBy)
		}
	}
	return b.err
}

// resultMax bounds a result in a listing: it is what came back, not what
// is approved, and `--json` has it whole.
const resultMax = 300

// clipped is s cut to n runes, the cut marked.
func clipped(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + ellipsis
	}
	return s
}

func cliTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format(time.RFC3339)
}
