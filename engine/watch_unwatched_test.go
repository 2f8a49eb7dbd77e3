package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/fsnotify/fsnotify"

	"keep/engine/api"
)

// TestAWatchNotInEffectIsShown: a watched folder inotify refuses to watch
// (its watches used up: ENOSPC, as fsnotify passes it on) is said in the
// workflow's views, the list's and the detail's, with the folder, why and
// the sysctl that raises the limit, and the schedule no longer says the
// producer checks when the folder changes; once a scheduled run (here
// run-now) sets the watch, the views say the watch again, and a file
// dropped wakes the producer. Before, keep only logged it: keep
// workflows, keep status and the TUI still said "Checks when inbox
// changes" of a folder nothing watched.
func TestAWatchNotInEffectIsShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inbox := filepath.Join(b.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	// started with no workflow, so that no step has watched anything
	// before the refusal is in place
	ctx, committed := startWatching(t, b)
	var full atomic.Bool
	full.Store(true)
	f := b.e.watching()
	f.mu.Lock()
	f.watch = func(w *fsnotify.Watcher, path string) error {
		if full.Load() {
			return fmt.Errorf("%q: %w", path, syscall.ENOSPC)
		}
		return w.Add(path)
	}
	f.mu.Unlock()
	b.deploy("watch", strings.Replace(watchWorkflow, "SCHEDULE", `{ watch: "inbox" }`, 1))
	committed("at deploy, the watch refused")

	d := b.workflow("watch")
	wfs, err := b.e.Workflows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []api.WorkflowView{d.WorkflowView, wfs[0]} {
		if want := "Checks every 5 minutes (inbox is not watched)"; v.Schedule != want {
			t.Errorf("schedule %q, want %q", v.Schedule, want)
		}
		if len(v.Unwatched) != 1 {
			t.Fatalf("unwatched = %+v, want inbox", v.Unwatched)
		}
		u := v.Unwatched[0]
		if u.Producer != "inbox" || u.Folder != "inbox" || !strings.Contains(u.Why, "fs.inotify.max_user_watches") {
			t.Errorf("unwatched = %+v, want producer inbox's folder inbox, the watch limit and its sysctl", u)
		}
		if s := u.String(); !strings.Contains(s, "runs on its schedule") {
			t.Errorf("%q does not say the producer runs on its schedule meanwhile", s)
		}
	}
	if got := d.Handlers[0].Schedule; got != "Checks every 5 minutes (inbox is not watched)" {
		t.Errorf("handler's schedule %q", got)
	}

	full.Store(false)
	runNowWhenIdle(t, ctx, b, "watch")
	committed("after run-now, the watch set")
	d = b.workflow("watch")
	if want := "Checks when inbox changes, and every 5 minutes"; d.Schedule != want || len(d.Unwatched) != 0 {
		t.Errorf("once watched: schedule %q, unwatched %+v; want %q and none", d.Schedule, d.Unwatched, want)
	}
	n := len(b.runs("watch"))
	if err := os.WriteFile(filepath.Join(inbox, "a.txt"), []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		committed("after a file was dropped into the folder watched now")
		if runs := b.runs("watch"); len(runs) > n && runs[0].Trigger == "watch" {
			break
		}
	}
}

// TestNotWatchedWhy: inotify's limits are named with the sysctl that
// raises each, not as the kernel's bare errno; anything else is said as
// it came.
func TestNotWatchedWhy(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		fmt.Errorf("%q: %w", "/x/inbox", syscall.ENOSPC): "fs.inotify.max_user_watches",
		syscall.EMFILE: "fs.inotify.max_user_instances",
		&os.PathError{Op: "stat", Path: "/x/inbox", Err: syscall.ENOENT}: "stat /x/inbox: no such file or directory",
	} {
		if got := notWatchedWhy(err); !strings.Contains(got, want) {
			t.Errorf("%v: %q, want it to say %q", err, got, want)
		}
	}
}
