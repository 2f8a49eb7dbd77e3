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
// the ones that wait on the person.
func toastText(n api.Notification) (string, bool) {
	var lead string
	switch n.Kind {
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

// after delivers msg once d has passed; tests switch timers off so that
// driving Update never waits.
func (m *Model) after(d time.Duration, msg tea.Msg) tea.Cmd {
	if m.noTimers {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}
