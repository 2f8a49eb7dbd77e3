package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/sandbox"
)

// TestAWatchFollowsItsFolderToWhereItIsNow: the folder a watch names can
// come to be another folder with no event on the one watched: a folder
// above it renamed (mv scans scans.old; mkdir -p scans/inbox: the kernel's
// watch goes along with the old folder and says nothing), or a link in its
// path pointed elsewhere (ln -sfn). The producer's next run not woken by
// the watch (its schedule; here run-now) looks where the folder is now,
// and a file dropped there wakes the producer. Before, the watch stayed on
// the old folder until keep restarted or the workflow was deployed again:
// the folder the producer lists woke it only at its rescan, and the old
// one, which it no longer lists, woke it instead. A second workflow
// watching the same folder must not keep the first on the old one.
func TestAWatchFollowsItsFolderToWhereItIsNow(t *testing.T) {
	for _, how := range []string{"the folder above renamed", "a link pointed elsewhere", "shared with another workflow"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			watch := "scans/inbox"
			if how == "a link pointed elsewhere" {
				watch = "inbox"
				for _, d := range []string{"first", "second"} {
					if err := os.MkdirAll(filepath.Join(b.root, d), 0o700); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Symlink("first", filepath.Join(b.root, "inbox")); err != nil {
					t.Fatal(err)
				}
			} else if err := os.MkdirAll(filepath.Join(b.root, watch), 0o700); err != nil {
				t.Fatal(err)
			}
			src := strings.NewReplacer("SCHEDULE", `{ watch: "`+watch+`" }`, `dir: "inbox"`, `dir: "`+watch+`"`).Replace(watchWorkflow)
			b.deploy("watch", src)
			if how == "shared with another workflow" {
				b.deploy("other", strings.Replace(src, `name: "watch"`, `name: "other"`, 1))
			}
			ctx, committed := startWatching(t, b)
			committed("at deploy")
			if how == "a link pointed elsewhere" {
				link := filepath.Join(b.root, "inbox")
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("second", link); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.Rename(filepath.Join(b.root, "scans"), filepath.Join(b.root, "scans.old")); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(b.root, watch), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			runNowWhenIdle(t, ctx, b, "watch")
			committed("after run-now")
			n := len(b.runs("watch"))
			if err := os.WriteFile(filepath.Join(b.root, watch, "x.txt"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			for {
				committed("after a file was dropped into the folder the watch names now")
				if runs := b.runs("watch"); len(runs) > n && runs[0].Trigger == "watch" {
					break
				}
			}
		})
	}
}

// runNowWhenIdle asks run-now until the run committed last has ended:
// run-now is refused while a run is in progress (DESIGN.md §5).
func runNowWhenIdle(t *testing.T, ctx context.Context, b *bundle, wf string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := b.e.RunNow(ctx, wf)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "has a run in progress") || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAFolderGoneIsAwaitedPastAScheduledRun: a watched folder removed is
// awaited, and watched again as soon as it is there again
// (TestAFolderMadeAgainIsWatchedAtOnce), even when a run not woken by the
// watch (its rescan; here run-now) came while it was gone. Before, that
// run, finding the folder missing, dropped the wait, and the folder made
// again woke nothing until the run after (the test's clock stands still:
// never).
func TestAFolderGoneIsAwaitedPastAScheduledRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inbox := deployWatchingInbox(t, b)
	ctx, committed := startWatching(t, b)
	committed("at deploy")
	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	committed("once the folder was removed")
	runNowWhenIdle(t, ctx, b, "watch")
	committed("after run-now, the folder gone")
	n := len(b.runs("watch"))
	if err := os.Mkdir(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inbox, "b.txt"), []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		committed("after the folder was made again")
		if runs := b.runs("watch"); len(runs) > n && runs[0].Trigger == "watch" {
			break
		}
	}
}

// TestAWatchOnKeepsOwnFolderIsRefused: keep validate refuses a watched
// folder that is one of keep's own places (a folder named after the
// database, its feeds or MCP caches, under a root that holds the
// database), as files.list refuses to list it, naming the folder at its
// line. Before, it passed: the watch sat on keep's own files, and as each
// of their changes is hidden from the producer, it never woke it.
func TestAWatchOnKeepsOwnFolderIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dbDir := rootAtTheDatabase(t, b)
	own := filepath.Base(b.dbPath) + ".mcp"
	for _, d := range []string{own, "mine"} {
		if err := os.Mkdir(filepath.Join(dbDir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ dir, want string }{
		{own, "keep's own files"},
		{filepath.Join(dbDir, own), "keep's own files"},
		{"mine", ""}, // a folder of the person's beside the database
	} {
		src := strings.NewReplacer("SCHEDULE", `{ watch: "`+c.dir+`" }`, `dir: "inbox"`, `dir: "mine"`).Replace(watchWorkflow)
		_, err := b.e.Validate("watch.js", []byte(src))
		if c.want == "" {
			if err != nil {
				t.Errorf("watch %q: %v", c.dir, err)
			}
			continue
		}
		var ve *sandbox.ValidationError
		if !errors.As(err, &ve) || len(ve.Diagnostics) != 1 || !strings.Contains(ve.Diagnostics[0].Message, c.want) || !strings.Contains(ve.Diagnostics[0].Message, c.dir) || ve.Diagnostics[0].Line != 6 {
			t.Errorf("watch %q: %v, want one diagnostic at line 6 naming the folder and saying %q", c.dir, err, c.want)
		}
	}
}
