package tui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"keep/engine"
	"keep/engine/api"
	"keep/tui/printable"
)

// The command line's tabular listings (keep workflows, inputs, events,
// runs, grants, auth list, mcp tools): one aligned row per item, every
// cell escaped and on one line. main.go's listing runner fetches, prints
// --json itself, and hands the items to one of these.

// Table is an aligned plain-text table.
type Table struct{ tw *tabwriter.Writer }

// NewTable starts a table on w, with a header row unless header is empty.
func NewTable(w io.Writer, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(header) > 0 {
		t.Row(header...)
	}
	return t
}

// Row adds one row; each cell is escaped before the tabwriter measures it,
// so columns align, and kept to one line (printable.Line): a newline in a
// cell would start a row keep did not write.
func (t *Table) Row(cols ...string) {
	for i, col := range cols {
		cols[i] = printable.Line(strings.ReplaceAll(col, "\t", " "))
	}
	fmt.Fprintln(t.tw, strings.Join(cols, "\t"))
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

// TimeText is a time as the command line prints it, "-" for none.
func TimeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339)
}

// TimePtr is TimeText of an optional time.
func TimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return TimeText(*t)
}

// Dash is s, or "-" when it is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Line flattens s to one line of at most n characters. A cut falls after
// a space, "," or ":" when one is near (so a word or a JSON value's piece
// is never cut in the middle), and is marked with "…".
func Line(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		cut := string(r[:n-1])
		if i := strings.LastIndexAny(cut, " ,:"); i > 0 && utf8.RuneCountInString(cut[:i]) >= n*2/3 {
			cut = strings.TrimRight(cut[:i+1], " ")
		}
		return cut + "…"
	}
	return s
}

// BlockText is why a workflow is blocked, on one line.
func BlockText(b *api.Block) string {
	if b == nil {
		return "-"
	}
	if b.Reason == "" {
		return string(b.Kind)
	}
	return Line(string(b.Kind)+": "+b.Reason, 60)
}

// WriteWorkflows is keep workflows.
func WriteWorkflows(w io.Writer, wfs []api.WorkflowView) error {
	t := NewTable(w, "NAME", "STATUS", "STATE", "BLOCK", "SCHEDULE", "NEXT RUN", "PENDING", "ATTENTION", "VERSION")
	for _, wf := range wfs {
		t.Row(wf.Name, string(wf.Status), wf.State, BlockText(wf.Block), wf.Schedule, TimePtr(wf.NextRun),
			strconv.Itoa(wf.PendingInputs), strconv.Itoa(wf.Attention), strconv.Itoa(wf.Version))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	// why, under the table: a column would widen every row for the one
	// workflow whose SCHEDULE says a folder is not watched
	for _, wf := range wfs {
		for _, u := range wf.Unwatched {
			if _, err := fmt.Fprintln(w, printable.Line(wf.Name+": "+u.String())); err != nil {
				return err
			}
		}
	}
	return nil
}

// OutcomeText is an output's status, with its attempts when it took more
// than one: "applied (after 2 attempts)".
func OutcomeText(o api.OutputView) string {
	if o.Attempts > 1 {
		return fmt.Sprintf("%s (after %d attempts)", o.Status, o.Attempts)
	}
	return string(o.Status)
}

// WriteInputs is keep inputs: each input, and under it the outputs it caused.
func WriteInputs(w io.Writer, ins []api.InputView) error {
	t := NewTable(w, "INPUT", "STATUS", "CREATED", "SOURCE", "TYPE", "TITLE", "EXTERNAL ID")
	for _, in := range ins {
		status := in.Status
		if in.Stale {
			status += " (stale)"
		}
		t.Row(in.InputID, status, TimeText(in.CreatedAt), in.Source, in.Type, Line(in.Title, 60), Line(in.ExternalID, 60))
		for _, out := range in.Outputs {
			t.Row("", "  → "+OutcomeText(out), TimeText(out.UpdatedAt), out.Connector, out.Method, Line(out.Title, 60), "mutation "+out.MutationID)
		}
	}
	return t.Flush()
}

// WriteEvents is keep events.
func WriteEvents(w io.Writer, evs []api.EventView) error {
	t := NewTable(w, "ID", "TOPIC", "MESSAGE ID", "STATUS", "CAUSED BY", "RESERVED BY", "CREATED", "PAYLOAD")
	for _, ev := range evs {
		t.Row(ev.ID, ev.Topic, Line(ev.MessageID, 40), string(ev.Status), Dash(strings.Join(ev.CausedBy, ",")), Dash(ev.ReservedBy),
			TimeText(ev.CreatedAt), Line(jsonShown(ev.Payload), 60))
	}
	return t.Flush()
}

// WriteRuns is keep runs.
func WriteRuns(w io.Writer, runs []api.RunView) error {
	t := NewTable(w, "ID", "HANDLER", "TYPE", "PHASE", "STATUS", "RETRY OF", "TRIGGER", "UPDATED", "ERROR")
	for _, r := range runs {
		t.Row(r.ID, r.Handler, r.HandlerType, string(r.Phase), string(r.Status), Dash(r.RetryOf), Dash(r.Trigger), TimeText(r.UpdatedAt), Line(r.Error, 80))
	}
	return t.Flush()
}

// WriteGrants is keep grants, and the capabilities keep deploy reports.
func WriteGrants(w io.Writer, gs []api.GrantView) error {
	t := NewTable(w, "CAPABILITY", "MODE", "SCOPE", "DAILY LIMIT", "USED")
	for _, g := range gs {
		limit := "-"
		if g.DailyLimit > 0 {
			limit = strconv.Itoa(g.DailyLimit)
		}
		used := "no"
		if g.Used {
			used = "yes"
		}
		t.Row(g.Capability, string(g.Mode), Dash(g.Scope), limit, used)
	}
	return t.Flush()
}

// WriteAccounts is keep auth list.
func WriteAccounts(w io.Writer, sts []engine.AccountStatus) error {
	// who the provider said signed in beside whom the config names: the
	// one place the text shows a sign-in as another user than meant
	t := NewTable(w, "NAME", "KIND", "USERNAME", "SIGNED IN AS", "STATE", "DETAIL")
	for _, st := range sts {
		t.Row(st.Name, st.Kind, Dash(st.Username), Dash(st.SignedInAs), st.State, Dash(st.Detail))
	}
	return t.Flush()
}

// WriteMCPTools is keep mcp tools NAME.
func WriteMCPTools(w io.Writer, tools []engine.MCPToolView) error {
	t := NewTable(w, "TOOL", "KIND", "ARGS", "DESCRIPTION")
	for _, v := range tools {
		first, _, _ := strings.Cut(strings.TrimSpace(v.Description), "\n")
		t.Row(v.Name, v.Kind, v.Args, Dash(first))
	}
	return t.Flush()
}
