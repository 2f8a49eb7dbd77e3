package tui

import (
	"fmt"
	"io"
	"strings"

	"keep/engine/api"
	"keep/tui/printable"
)

// WriteTryReport is keep try's report: what a dry run would have done.
// Traces are left out of the summary keep new and edit print. What a
// script wrote (a title, an id, a preview, an error) stays on its line
// (printable.Line): a newline in it must not write a heading of the
// report ("mutations it would make (0):") of its own.
func WriteTryReport(w io.Writer, rep *api.TryReport, traces bool) {
	fmt.Fprintf(w, "dry run of %s: a throw-away copy that started %s; nothing was changed\n", rep.Workflow, rep.StartedFrom)
	if rep.Note != "" {
		fmt.Fprintln(w, rep.Note)
	}
	fmt.Fprintf(w, "\ninputs (%d):\n", len(rep.Inputs))
	for _, in := range rep.Inputs {
		fmt.Fprintf(w, "  %s/%s %s  %s\n", in.Source, in.Type, printable.Line(in.ExternalID), printable.Line(in.Title))
	}
	fmt.Fprintf(w, "\nreads (%d):\n", len(rep.Reads))
	for _, r := range rep.Reads {
		how := "performed"
		if !r.Performed {
			how = "captured: not performed; answered empty (--with-reads performs it)"
		}
		fmt.Fprintf(w, "  %s.%s %s  (%s)\n", r.Connector, r.Method, Line(jsonShown(r.Args), 120), how)
	}
	fmt.Fprintf(w, "hosts: %s\n", Dash(strings.Join(rep.Hosts, ", ")))
	fmt.Fprintf(w, "\nmutations it would make (%d):\n", len(rep.Mutations))
	for i, m := range rep.Mutations {
		fmt.Fprintf(w, "  %d. %s.%s  %s\n", i+1, m.Connector, m.Method, printable.Line(m.Preview))
		if m.Title != "" || len(m.CausedBy) > 0 {
			fmt.Fprintf(w, "     %s · for: %s · run %s\n", Dash(printable.Line(m.Title)), Dash(printable.Line(strings.Join(m.CausedBy, ", "))), m.RunID)
		}
		if m.NeedsApproval {
			fmt.Fprintf(w, "     %s\n", m.Approval)
		}
	}
	if rep.LimitReached {
		fmt.Fprintln(w, "  … stopped at the limit (--limit); there is more")
	}
	if len(rep.Capabilities) > 0 {
		fmt.Fprintln(w, "\ngrants it needs:")
		for _, g := range rep.Capabilities {
			fmt.Fprintf(w, "  %s (now: %s)\n", g.Capability, g.Mode)
		}
	}
	if m := rep.Manifest; m != nil {
		// what this run did is a sample; the manifest is the bound
		fmt.Fprintf(w, "\nall it may do (its manifest): reads %s; mutations %s; hosts %s\n", Dash(strings.Join(m.Names(false), ", ")),
			Dash(strings.Join(m.Names(true), ", ")), Dash(strings.Join(m.Hosts, ", ")))
	}
	fmt.Fprintf(w, "\napprovals follow %s\n", rep.ApprovalsFrom)
	fmt.Fprintf(w, "events left pending: %d\n", rep.PendingEvents)
	if !traces {
		return
	}
	fmt.Fprintf(w, "\nruns (%d):\n", len(rep.Runs))
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "  run %s: %s %s, %s", r.ID, r.HandlerType, printable.Line(r.Handler), r.Status)
		if r.Error != "" {
			fmt.Fprintf(w, ": %s", printable.Line(r.Error))
		}
		fmt.Fprintln(w)
		for _, l := range r.Trace {
			switch l.Kind {
			case "call":
				fmt.Fprintf(w, "    [%s] %s.%s(%s) → %s%s\n", l.Phase, l.Connector, l.Method, Line(jsonShown([]byte(l.Args)), 120), Line(jsonShown([]byte(l.Result)), 120), errText(l.Error))
			case "log":
				fmt.Fprintf(w, "    [%s] console.%s: %s\n", l.Phase, l.Method, Line(l.Result, 200))
			default:
				fmt.Fprintf(w, "    [%s] %s\n", l.Phase, Line(l.Result, 200))
			}
		}
	}
}

func errText(s string) string {
	if s == "" {
		return ""
	}
	return " error: " + printable.Line(s)
}
