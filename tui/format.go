package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"keep/engine"
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
func scheduleWords(w engine.WorkflowView, now time.Time) string {
	s := shortUnits.Replace(w.Schedule)
	if s == "" {
		s = "Runs when asked"
	}
	if w.NextRun != nil && w.State != engine.StatePaused && w.State != engine.StateStopped {
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
	case engine.StateRunning:
		return "Running"
	case engine.StateIdle:
		return "Idle"
	case engine.StateNeedsAttention:
		return "Needs you"
	case engine.StatePaused:
		return "Paused"
	case engine.StateStopped:
		return "Stopped"
	}
	return state
}

func stateGlyph(state string) string {
	switch state {
	case engine.StateRunning:
		return "▶"
	case engine.StateNeedsAttention:
		return "▲"
	case engine.StatePaused:
		return "‖"
	case engine.StateStopped:
		return "■"
	}
	return "●"
}

// inputWords is an input's status in words; a done input that changed
// nothing says so, because "done" alone reads as "something was done".
func inputWords(in engine.InputView) string {
	switch in.Status {
	case engine.InputPending:
		if in.Stale {
			return "pending · stale"
		}
		return "pending"
	case engine.InputDone:
		if len(in.Outputs) == 0 {
			return "done, no changes"
		}
		return "done"
	case engine.InputNeedsAttention:
		return "needs you"
	case engine.InputSkipped:
		return "skipped"
	}
	return in.Status
}

func inputGlyph(status string) string {
	switch status {
	case engine.InputDone:
		return "✓"
	case engine.InputNeedsAttention:
		return "▲"
	case engine.InputSkipped:
		return "–"
	}
	return "○"
}

// outputWords is a mutation's ledger state in words (DESIGN §7.3).
func outputWords(o engine.OutputView, now time.Time) string {
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

var kindLabels = map[engine.AttentionKind]string{
	engine.AttentionApproval:        "APPROVAL",
	engine.AttentionReconciliation:  "UNCERTAIN",
	engine.AttentionFailedRun:       "FAILED",
	engine.AttentionBlockedWorkflow: "BLOCKED",
	engine.AttentionStaleInput:      "STALE",
}

func kindLabel(kind engine.AttentionKind) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	return strings.ToUpper(string(kind))
}

// fit makes s at most w cells wide. A cut falls on a word boundary when one
// is near, and is always marked with "…", so nothing reads as complete when
// it is not.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w == 1 {
		return ellipsis
	}
	cut := ansi.Truncate(s, w-1, "")
	if i := strings.LastIndexByte(cut, ' '); i > 0 && ansi.StringWidth(cut[:i]) >= w*2/3 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ") + ellipsis
}

// pad fits s into exactly w cells.
func pad(s string, w int) string {
	s = fit(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// padLeft fits s into exactly w cells, aligned right.
func padLeft(s string, w int) string {
	s = fit(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		s = strings.Repeat(" ", n) + s
	}
	return s
}

// oneLine flattens text meant for one row (errors and previews carry
// newlines and tabs that would break the grid).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// wrap breaks s into lines of at most w cells at word boundaries, at most n
// lines; a cut is marked with "…" on the last one.
func wrap(s string, w, n int) []string {
	if w <= 0 || n <= 0 {
		return nil
	}
	lines := strings.Split(ansi.Wrap(oneLine(s), w, ""), "\n")
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = fit(lines[n-1]+" "+strings.Repeat("x", w), w) // force the mark
		lines[n-1] = strings.TrimSuffix(strings.TrimRight(strings.TrimSuffix(lines[n-1], ellipsis), "x "), " ") + ellipsis
	}
	return lines
}
