package tui

import (
	"strings"
	"testing"

	"keep/engine/api"
)

// unwatchedInbox is the engine's view of a workflow whose watched folder
// inotify refused (engine: TestAWatchNotInEffectIsShown).
var unwatchedInbox = api.UnwatchedFolder{Producer: "scan", Folder: "inbox",
	Why: "the system's limit on inotify watches is reached (raise it with sysctl fs.inotify.max_user_watches)"}

// A watched folder whose watch is not in effect is said under its
// workflow's row in the Workflows pane, in 80 columns: which folder, why
// (to the sysctl at the sentence's end, wrapped, not cut off) and that
// the producer runs on its schedule meanwhile; the rows below still show.
// keep workflows and keep status say the same sentence.
func TestAFolderNotWatchedIsShown(t *testing.T) {
	t.Parallel()
	s := newStub()
	s.workflows[1].Schedule = "Checks every 5 minutes (inbox is not watched)"
	s.workflows[1].Unwatched = []api.UnwatchedFolder{unwatchedInbox}
	h := newHarness(t, s, 80, 24)
	h.keys("1")
	// the sentence as one line, its wrapping and the pane's frame taken out
	screen := strings.Join(strings.Fields(strings.ReplaceAll(h.screen(), "│", " ")), " ")
	for _, want := range []string{"Checks every 5 min (inbox is not watched)", "inbox is not watched: the system's limit on inotify watches",
		"fs.inotify.max_user_watches", "scan runs on its schedule meanwhile", "daily-digest"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the Workflows pane does not say %q:\n%s", want, h.screen())
		}
	}

	var list, status strings.Builder
	if err := WriteWorkflows(&list, s.workflows); err != nil {
		t.Fatal(err)
	}
	if err := WriteWorkflow(&status, &api.WorkflowDetail{WorkflowView: s.workflows[1]}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"keep workflows": list.String(), "keep status": status.String()} {
		if !strings.Contains(out, unwatchedInbox.String()) {
			t.Errorf("%s does not say %q:\n%s", name, unwatchedInbox.String(), out)
		}
	}
}
