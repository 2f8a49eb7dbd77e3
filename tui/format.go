package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"keep/engine"
	"keep/engine/api"
)

const ellipsis = "…"

// span says a duration the way a person would at a glance; precision past
// the largest unit is noise on a dashboard.
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1 min"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	case d < 48*time.Hour:
		return "1 day"
	default:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
}

// ago is a past moment relative to now ("2 min ago").
func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	if d < time.Minute {
		return "just now"
	}
	return span(d) + " ago"
}

// until is a coming moment relative to now ("3 min"); a moment already past
// is due, not negative.
func until(now, t time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		return "due now"
	}
	return span(d)
}

// shortUnits keeps the engine's schedule words but fits them in a narrow
// pane ("Checks every 5 minutes" → "Checks every 5 min").
var shortUnits = strings.NewReplacer(" minutes", " min", " minute", " min", " seconds", " s", " second", " s")

// scheduleWords: the schedule in words and when it next runs, if it will.
func scheduleWords(w api.WorkflowView, now time.Time) string {
	s := shortUnits.Replace(w.Schedule)
	if s == "" {
		s = "Runs when asked"
	}
	if w.NextRun != nil && w.State != api.StatePaused && w.State != api.StateStopped {
		if d := until(now, *w.NextRun); d == "due now" {
			s += " · due now"
		} else {
			s += " · next " + d
		}
	}
	return s
}

// stateWords is the workflow state a person reads (DESIGN §10).
func stateWords(state string) string {
	switch state {
	case api.StateRunning:
		return "Running"
	case api.StateIdle:
		return "Idle"
	case api.StateNeedsAttention:
		return "Needs you"
	case api.StatePaused:
		return "Paused"
	case api.StateStopped:
		return "Stopped"
	}
	return state
}

func stateGlyph(state string) string {
	switch state {
	case api.StateRunning:
		return "▶"
	case api.StateNeedsAttention:
		return "▲"
	case api.StatePaused:
		return "‖"
	case api.StateStopped:
		return "■"
	}
	return "●"
}

// inputWords is an input's status in words; a done input that changed
// nothing says so, because "done" alone reads as "something was done".
func inputWords(in api.InputView) string {
	switch in.Status {
	case api.InputPending:
		if in.Stale {
			return "pending · stale"
		}
		return "pending"
	case api.InputDone:
		if len(in.Outputs) == 0 {
			return "done, no changes"
		}
		return "done"
	case api.InputNeedsAttention:
		return "needs you"
	case api.InputSkipped:
		return "skipped"
	}
	return in.Status
}

func inputGlyph(status string) string {
	switch status {
	case api.InputDone:
		return "✓"
	case api.InputNeedsAttention:
		return "▲"
	case api.InputSkipped:
		return "–"
	}
	return "○"
}

// outputWords is a mutation's ledger state in words (DESIGN §7.3).
func outputWords(o api.OutputView, now time.Time) string {
	switch o.Status {
	case engine.MutationAwaitingApproval:
		return "waiting for approval"
	case engine.MutationApproved:
		return "approved, sending"
	case engine.MutationInFlight:
		return "sending"
	case engine.MutationApplied:
		if o.Attempts > 1 {
			return fmt.Sprintf("applied (%d attempts)", o.Attempts)
		}
		if a := ago(now, o.UpdatedAt); a != "" {
			return "applied " + a
		}
		return "applied"
	case engine.MutationFailed:
		return "failed"
	case engine.MutationNeedsReconcile:
		return "checking it happened"
	case engine.MutationIndeterminate:
		return "uncertain, needs you"
	case engine.MutationSkipped:
		return "skipped"
	}
	return string(o.Status)
}

var kindLabels = map[api.AttentionKind]string{
	api.AttentionApproval:        "APPROVAL",
	api.AttentionReconciliation:  "UNCERTAIN",
	api.AttentionFailedRun:       "FAILED",
	api.AttentionBlockedWorkflow: "BLOCKED",
	api.AttentionStaleInput:      "STALE",
}

func kindLabel(kind api.AttentionKind) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	return strings.ToUpper(string(kind))
}

// cells is how many cells s may take on a terminal, the wider of the two
// ways terminals count: by grapheme cluster (lipgloss, and a terminal in
// Unicode mode 2027) and by code point (most terminals, tmux among them,
// and Bubble Tea's renderer with them). They differ on text a script
// controls (a Thai ก followed by sixty ำ is one cluster one cell wide, and
// sixty-one cells by code point); the renderer cuts a line at the screen's
// edge, so text measured the narrow way would be cut unseen. Every
// fitting and wrapping of text measures with cells, so what a card says
// is inside the screen whichever way it is drawn. Columns are padded in
// cells too, so the next column is never pushed out; a line's last fill
// (row, lipgloss) counts by cluster, so what one way counts more than the
// other falls on that fill and the frame, never on text.
func cells(s string) int { return max(ansi.StringWidth(s), ansi.StringWidthWc(s)) }

// truncate is a start of s (plain text) at most w cells wide both ways:
// whole clusters while they fit, and, where a cluster is wider by code
// point than the room left, cut between its code points, as a terminal
// that counts them draws it. (ansi.TruncateWc keeps a string whose
// clusters fit, whatever its code points count.)
func truncate(s string, w int) string {
	s = ansi.Truncate(s, w, "")
	if ansi.StringWidthWc(s) <= w {
		return s
	}
	n := 0
	for i, r := range s {
		if n += ansi.StringWidthWc(string(r)); n > w {
			return s[:i]
		}
	}
	return s
}

// fit makes s at most w cells wide. A cut falls on a word boundary when one
// is near, and is always marked with "…", so nothing reads as complete when
// it is not.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if cells(s) <= w {
		return s
	}
	if w == 1 {
		return ellipsis
	}
	cut := truncate(s, w-1)
	if i := strings.LastIndexByte(cut, ' '); i > 0 && cells(cut[:i]) >= w*2/3 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ") + ellipsis
}

// pad fits s into exactly w cells.
func pad(s string, w int) string {
	s = fit(s, w)
	if n := w - cells(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// padLeft fits s into exactly w cells, aligned right.
func padLeft(s string, w int) string {
	s = fit(s, w)
	if n := w - cells(s); n > 0 {
		s = strings.Repeat(" ", n) + s
	}
	return s
}

// oneLine flattens text meant for one row (errors and previews carry
// newlines and tabs that would break the grid).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// wrap breaks s into lines of at most w cells (see breakLines), at most n
// lines; a cut is marked with "…" on the last one.
func wrap(s string, w, n int) []string {
	if w <= 0 || n <= 0 {
		return nil
	}
	lines := breakLines(oneLine(s), w)
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = fit(lines[n-1]+" "+strings.Repeat("x", w), w) // force the mark
		lines[n-1] = strings.TrimSuffix(strings.TrimRight(strings.TrimSuffix(lines[n-1], ellipsis), "x "), " ") + ellipsis
	}
	return lines
}

// jsonShown is a JSON value as a person reads it: "<", ">" and "&" as
// themselves, not the \u003c Go's encoder writes for them (the ledger
// holds what the encoder wrote), in the order written; anything not JSON
// is shown as it is.
func jsonShown(raw []byte) string {
	if !json.Valid(raw) {
		return string(raw)
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		// an escape: one of the three HTML ones becomes its character,
		// any other is kept as written (\\u003c stays a backslash and text)
		if i+6 <= len(raw) && raw[i+1] == 'u' {
			switch strings.ToLower(string(raw[i+2 : i+6])) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteByte(c)
		b.WriteByte(raw[i+1])
		i++
	}
	return b.String()
}

// hang indents the lines a token too long for one line continues on, so
// they read as one value rather than as new words.
const hang = "  "

// breakLines breaks s into lines of at most w cells, keeping every
// character. It breaks between words; a word too long for a line (a JSON
// value, a URL, an id) is broken only after a "," or ":" (a JSON
// boundary), its continuation lines hanging under it; only a piece with no such boundary that is still too long is
// broken inside, where nothing else is possible. Every wrapped text view
// (the TUI's cards and traces, `keep attention`, `keep mutations`) breaks
// through here, so none cuts a value in the middle of a token.
func breakLines(s string, w int) []string {
	w = max(w, 1)
	var lines []string
	cur, curW := "", 0
	flush := func() {
		lines = append(lines, cur)
		cur, curW = "", 0
	}
	for i, word := range strings.Split(s, " ") {
		ww := cells(word)
		// a word too long for any line is broken at its boundaries, from
		// this line when its first piece fits here
		long := ww > w && word != ""
		switch {
		case i == 0:
		case curW+1+ww <= w,
			long && curW+1+cells(boundaryPieces(word)[0]) <= w:
			cur, curW = cur+" ", curW+1
		default:
			flush()
		}
		if curW+ww <= w {
			cur, curW = cur+word, curW+ww
			continue
		}
		for j, piece := range tokenLines(word, w-curW, w) {
			if j > 0 {
				flush()
			}
			cur, curW = cur+piece, curW+cells(piece)
		}
	}
	return append(lines, cur)
}

// tokenLines breaks one word too long for its line after its "," and ":",
// the first line first cells wide, the others w cells and hanging by hang,
// packing as many pieces to a line as fit; a piece still too long is cut
// by cells.
func tokenLines(word string, first, w int) []string {
	// the hang only where a line keeps room for a wide character after
	// it: narrower, it would push every continuation past w
	ind := hang
	if w-len(hang) < 2 {
		ind = ""
	}
	var lines []string
	cur, curW, room := "", 0, max(first, 1)
	for _, piece := range boundaryPieces(word) {
		pw := cells(piece)
		if curW+pw <= room {
			cur, curW = cur+piece, curW+pw
			continue
		}
		if curW > 0 {
			lines, cur, curW = append(lines, cur), "", 0
			room = max(w-len(ind), 1)
		}
		for pw > room {
			head := truncate(piece, room)
			if head == "" { // one character wider than the room: it goes whole
				_, size := utf8.DecodeRuneInString(piece)
				head = piece[:size]
			}
			lines = append(lines, head)
			room = max(w-len(ind), 1)
			piece = piece[len(head):]
			pw = cells(piece)
		}
		cur, curW = piece, pw
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	for i := 1; i < len(lines); i++ {
		lines[i] = ind + lines[i]
	}
	return lines
}

// boundaryPieces splits word after each "," and ":", keeping them.
func boundaryPieces(word string) []string {
	var out []string
	for word != "" {
		i := strings.IndexAny(word, ",:")
		if i < 0 {
			return append(out, word)
		}
		out = append(out, word[:i+1])
		word = word[i+1:]
	}
	return out
}
