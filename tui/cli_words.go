package tui

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/charmbracelet/x/term"

	"keep/engine/api"
	"keep/engine/authoring"
	"keep/tui/printable"
)

// Words the command line says beside its listings: what an approval
// covered, what a new user does first, a draft as keep writes it, and the
// width listings wrap to.

// ApprovedWords says what an approval covered: this call, or always for
// the scope the card showed (or the whole capability, asked wider).
func ApprovedWords(id string, item *api.AttentionItem, always, wide bool) string {
	capability, scope := "this capability", ""
	if item != nil {
		capability, scope = item.Connector+"."+item.Method, printable.Line(item.Scope)
	}
	switch {
	case wide:
		return fmt.Sprintf("approved %s, and always from now on: %s, any scope", id, capability)
	case always && scope != "":
		return fmt.Sprintf("approved %s, and always from now on: %s for %s", id, capability, scope)
	case always:
		return fmt.Sprintf("approved %s, and always from now on: %s", id, capability)
	case scope != "":
		return fmt.Sprintf("approved %s: this call only (--always allows %s for %s from now on)", id, capability, scope)
	}
	return fmt.Sprintf("approved %s: this call only (--always allows %s from now on)", id, capability)
}

// StartupNote tells a new user what to do when there is nothing to show.
func StartupNote(ctx context.Context, api api.API) string {
	wfs, err := api.Workflows(ctx)
	if err == nil && len(wfs) == 0 {
		return "No workflows yet: keep init, then keep deploy FILE"
	}
	return ""
}

// DraftText is what keep writes of a draft: a failed one under a header
// that says so.
func DraftText(d *authoring.Draft) string {
	if d.Invalid {
		return authoring.InvalidHeader(d) + d.Source
	}
	return d.Source
}

// TermWidth is the width listings wrap to: the terminal's, or 80 when the
// output is not a terminal.
func TermWidth() int {
	if w, _, err := term.GetSize(os.Stdout.Fd()); err == nil && w > 0 {
		return w
	}
	return 80
}

// goFlagName is a flag as Go's flag package names it in an error, "-name"
// after "not defined: ", "needs an argument: " or "for [flag] ", ending
// the phrase: a value it quotes ("for -ab") is not followed by ':' or the
// end, so it is left as typed.
var goFlagName = regexp.MustCompile(`(not defined: |needs an argument: |for (?:flag )?)-([A-Za-z0-9][A-Za-z0-9_-]*)(:|$)`)

// FlagError is a flag package error with each flag written as keep's usage
// lines and help write it: --name, and -o for a one-letter flag.
func FlagError(err error) string {
	return goFlagName.ReplaceAllStringFunc(err.Error(), func(m string) string {
		sub := goFlagName.FindStringSubmatch(m)
		dash := "--"
		if len(sub[2]) == 1 {
			dash = "-"
		}
		return strings.Replace(sub[1], "for flag ", "for ", 1) + dash + sub[2] + sub[3]
	})
}
