package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// toastFor is how long a toast stays: long enough to read, short enough
// not to cover the pane below it for long.
const toastFor = 5 * time.Second

// toastMaxWidth keeps a toast a corner note, not a banner.
const toastMaxWidth = 48

type toast struct {
	id   int
	text string
}

// toastText says which notifications deserve a toast, and in what words:
// the ones that wait on the person, and the ones meant for them.
func toastText(n api.Notification) (string, bool) {
	var lead string
	switch n.Kind {
	case api.NoteNotifySend, api.NoteNotifyUser:
		return personText(n), true
	case api.NoteApproval:
		lead = "Approval needed"
	case api.NoteNeedsReconcile:
		lead = "Checking whether a change happened"
	case api.NoteIndeterminate:
		lead = "Uncertain: did it happen?"
	case api.NoteRunFailed:
		lead = "A run failed"
	default:
		return "", false
	}
	if n.Workflow != "" {
		lead += " · " + n.Workflow
	}
	return lead, true
}

// echoes says whether n is notify_user telling of news the TUI already
// announces with a toast of its own (its topic is that news' kind: an
// approval asked, a run failed): the person has been told, and a second
// toast, wider, would only cover the card it is about.
func echoes(n api.Notification) bool {
	if n.Kind != api.NoteNotifyUser {
		return false
	}
	_, own := toastText(api.Notification{Kind: n.Title})
	return own
}

// personText is a notification meant for the person on one line: the
// script's title (or the event's topic) and what it says. Escaped on the
// way in (printableAPI), so a script's text never drives the terminal.
func personText(n api.Notification) string {
	title, text := oneLine(n.Title), oneLine(n.Text)
	switch {
	case title == "":
		return text
	case text == "":
		return title
	}
	return title + ": " + text
}

// bell is the terminal bell notify.send rings, the one control character
// keep writes for a script; its words come escaped.
const bell = "\a"

// after delivers msg once d has passed; tests switch timers off so that
// driving Update never waits.
func (m *Model) after(d time.Duration, msg tea.Msg) tea.Cmd {
	if m.noTimers {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}
