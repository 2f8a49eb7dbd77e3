package tui

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/tui/printable"
)

// WriteWorkflow is keep status: one workflow in detail, then its handlers.
func WriteWorkflow(w io.Writer, d *api.WorkflowDetail) error {
	kv := NewTable(w)
	kv.Row("name:", d.Name)
	kv.Row("status:", string(d.Status))
	kv.Row("state:", d.State)
	kv.Row("block:", BlockText(d.Block))
	if d.Block != nil {
		// what to type for a retry or resume meant for this block only
		kv.Row("block id:", d.Block.AnswerTo(d.Name))
	}
	kv.Row("version:", strconv.Itoa(d.Version))
	kv.Row("schedule:", Dash(d.Schedule))
	for _, u := range d.Unwatched {
		kv.Row("not watched:", Line(u.String(), 300))
	}
	kv.Row("next run:", TimePtr(d.NextRun))
	kv.Row("attention:", strconv.Itoa(d.Attention))
	cn := d.Counts
	kv.Row("inputs:", fmt.Sprintf("%d pending, %d done, %d skipped, %d need attention",
		cn.InputsPending, cn.InputsDone, cn.InputsSkipped, cn.InputsNeedsAttention))
	for _, conn := range slices.Sorted(maps.Keys(cn.Outputs)) {
		oc := cn.Outputs[conn]
		kv.Row("outputs "+conn+":", fmt.Sprintf("%d applied, %d failed, %d waiting", oc.Applied, oc.Failed, oc.Waiting))
	}
	if r := d.LastRun; r != nil {
		kv.Row("last run:", fmt.Sprintf("%s %s (%s) %s/%s at %s", r.ID, r.Handler, r.HandlerType, r.Phase, r.Status, TimeText(r.UpdatedAt)))
		if r.Error != "" {
			kv.Row("last error:", Line(r.Error, 200))
		}
	} else {
		kv.Row("last run:", "-")
	}
	writeWorkflowAnswers(kv, d.Answers)
	if err := kv.Flush(); err != nil {
		return err
	}
	if len(d.Handlers) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := NewTable(w, "HANDLER", "TYPE", "SCHEDULE", "NEXT RUN", "WAKE AT", "TOPICS")
	for _, h := range d.Handlers {
		t.Row(h.Name, h.Type, Dash(h.Schedule), TimePtr(h.NextRunAt), TimePtr(h.WakeAt), Dash(strings.Join(h.Topics, ", ")))
	}
	return t.Flush()
}

// WriteTrace is keep logs: the run (in full when it is known here, else
// its id), then its trace lines.
func WriteTrace(w io.Writer, runID string, runView *api.RunView, lines []api.TraceLine) error {
	if runView != nil {
		r := runView
		fmt.Fprintf(w, "run %s: %s (%s) %s/%s, updated %s\n", r.ID, printable.Line(r.Handler), r.HandlerType, r.Phase, r.Status, TimeText(r.UpdatedAt))
		if r.Error != "" {
			fmt.Fprintf(w, "error: %s\n", Line(r.Error, 300))
		}
	} else {
		fmt.Fprintf(w, "run %s\n", runID)
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "(no trace lines)")
		return nil
	}
	t := NewTable(w, "AT", "PHASE", "KIND", "WHAT", "RESULT", "MS")
	for _, l := range lines {
		// a trace written before keep kept < and > holds \u003c
		what, result := jsonShown([]byte(l.Args)), jsonShown([]byte(l.Result))
		switch {
		case l.Kind == "call":
			what = l.Connector + "." + l.Method + "(" + what + ")"
		case what == "":
			// a console line or a note: its text is the whole of it
			what, result = result, ""
		}
		if l.Error != "" {
			result = "error: " + l.Error
		}
		t.Row(TimeText(l.At), l.Phase, l.Kind, Line(what, 80), Line(result, 80), strconv.FormatInt(l.DurationMS, 10))
	}
	return t.Flush()
}

// WriteServiceState is keep service status.
func WriteServiceState(w io.Writer, st engine.ServiceState) error {
	switch {
	case !st.Installed:
		fmt.Fprintf(w, "not installed (keep service install writes %s)\n", st.Path)
	case st.Running && !st.Since.IsZero():
		fmt.Fprintf(w, "running since %s (%s)\n", st.Since.Local().Format(time.RFC3339), st.Path)
	case st.Running:
		fmt.Fprintf(w, "running (%s)\n", st.Path)
	default:
		fmt.Fprintf(w, "not running: %s (%s)\n", st.State, st.Path)
	}
	return nil
}

// WriteVersion is keep version.
func WriteVersion(w io.Writer, v engine.VersionInfo) {
	commit := v.Commit
	if commit != "unknown" {
		commit = commit[:min(12, len(commit))]
	}
	if v.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "keep %s, revision %s, %s\nschema version %d\n", v.Version, commit, v.GoVersion, v.SchemaVersion)
	switch {
	case v.DatabaseError != "":
		fmt.Fprintf(w, "database %s: %s\n", v.Database, v.DatabaseError)
	case v.DatabaseVersion > v.SchemaVersion:
		fmt.Fprintf(w, "database %s: schema version %d, newer than this keep: use a newer keep\n", v.Database, v.DatabaseVersion)
	case v.DatabaseVersion > 0:
		fmt.Fprintf(w, "database %s: schema version %d\n", v.Database, v.DatabaseVersion)
	default:
		fmt.Fprintf(w, "database %s: not created yet\n", v.Database)
	}
}

// WriteGC is keep gc: what was pruned, and the database's size before and after.
func WriteGC(w io.Writer, rep engine.GCReport) {
	fmt.Fprintf(w, "pruned %d trace lines and %d finished runs; compacted %d prepare results and %d payloads\n",
		rep.Traces, rep.Runs, rep.PrepareResults, rep.Payloads)
	fmt.Fprintf(w, "database %s → %s\n", humanBytes(rep.BytesBefore), humanBytes(rep.BytesAfter))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// writeWorkflowAnswers lists what the person answered about the workflow
// itself (pause, retry, resume), newest last, each with the block it
// answered: an answer given is history the person can read back.
func writeWorkflowAnswers(kv *Table, as []api.AnswerView) {
	earlier, as := latestAnswers(as, shownAnswers)
	if earlier > 0 {
		kv.Row("answered:", earlierText(earlier, "keep status --json"))
	}
	for _, a := range as {
		kv.Row("answered:", Line(answerText(a)+" at "+TimeText(a.At), 200))
	}
}
