package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"keep/engine/api"
	"keep/tui/printable"
)

// What a person approves is the call the host observed, not the title the
// script chose: the TUI's cards and the CLI's `keep attention` and `keep
// mutations` show both, each labelled, and wrap the call rather than cut
// it. Every argument is named on a line of its own; a value longer than
// its room is cut with the count of bytes not shown, so nothing hides
// behind an ellipsis, and an opened card or `keep attention ID` shows it
// whole.

// callText names a call as the host read it: "files.append → notes/a.txt".
func callText(connector, method, target string) string {
	call := ""
	if connector != "" || method != "" {
		call = connector + "." + method
	}
	if target != "" {
		if call == "" {
			return target
		}
		call += " → " + target
	}
	return call
}

// callLines is the call as the host shows it: what it acts on, the
// connector's words for it, then every argument named, one a line (see
// engine.Arguments), each value cut to room bytes with the bytes not shown
// counted (room 0: whole). keep's own fields (reconcile) come back apart in
// own, each line saying so: they are not sent. A listing names at most
// limit arguments (0: all) and ends with how many more there are and where
// they are (more); every line is wrapped to w cells and never cut.
func callLines(c callView, w, room, limit int, more string) (call, own []string) {
	// The target is one line, whatever a script put in it (a file name
	// may hold a newline): a newline is shown as \n, never as a line of
	// the call that is not there.
	call = wrapAll(callText(c.connector, c.method, printable.Line(c.target)), w)
	for _, l := range previewLines(c.preview, -1) {
		call = append(call, wrapAll(l, w)...)
	}
	args := api.Arguments(c.params, room)
	var rest []api.Argument
	if limit > 0 && len(args) > limit {
		args, rest = args[:limit], args[limit:]
	}
	for _, a := range args {
		// A value is JSON text: a control character in it is already
		// written \u001b, but the encoder leaves DEL, C1 and format
		// characters raw; they are made printable here, once, before the
		// line is measured and wrapped.
		shown := printable.String(a.Shown())
		if a.Keep {
			own = append(own, wrapAll(keepLabel+shown, w)...)
			continue
		}
		call = append(call, wrapAll(shown, w)...)
	}
	if len(rest) > 0 {
		n := 0
		for _, a := range rest {
			n += len(a.Value) + a.Hidden
		}
		call = append(call, wrapAll(fmt.Sprintf("… %d more arguments (%d bytes): %s", len(rest), n, more), w)...)
	}
	return call, own
}

// callView is what callLines reads of a view.
type callView struct {
	connector, method, target, preview string
	params                             json.RawMessage
}

// The arguments a listing names: the CLI's, and a closed card's, short
// enough that the card fits a pane and can be answered; an opened card and
// `keep attention ID` name every one.
const (
	listedArguments = 40
	cardArguments   = 8
)

// keepLabel names keep's own fields on a card and in the CLI.
const keepLabel = "keep's, not sent: "

// wrapAll breaks s into lines of at most w cells (see breakLines), keeping
// every character.
func wrapAll(s string, w int) []string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\t", "  "))
	if s == "" {
		return nil
	}
	return breakLines(s, w)
}
