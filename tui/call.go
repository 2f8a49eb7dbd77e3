package tui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// What a person approves is the call the host observed, not the title the
// script chose: the TUI's cards and the CLI's `keep attention` and `keep
// mutations` show both, each labelled, and wrap the call rather than cut
// it, so nothing that matters hides behind an ellipsis.

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

// callLines is the call and the parameters that matter, as the host shows
// them: the connector's preview of the actual parameters, or, for a call
// without one, every parameter. Each line is wrapped to w cells and never
// cut: this is what an answer acts on.
func callLines(connector, method, target, preview string, params json.RawMessage, w int) []string {
	head := callText(connector, method, target)
	if strings.TrimSpace(preview) == "" {
		if pl := paramsLine(params); pl != "" && head != "" {
			head += "  " + pl
		} else if pl != "" {
			head = pl
		}
	}
	out := wrapAll(head, w)
	for _, l := range previewLines(preview, -1) {
		out = append(out, wrapAll(l, w)...)
	}
	return out
}

// wrapAll breaks s into lines of at most w cells, at word boundaries where
// it can and inside a word where it must, keeping every character.
func wrapAll(s string, w int) []string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\t", "  "))
	if s == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(s, max(w, 1), ""), "\n")
}
