package reference

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"keep/connectors"
	"keep/sandbox"
)

var (
	rescan     = fmt.Sprintf("%d minutes", int(sandbox.WatchRescan.Minutes()))
	quiet      = sandbox.WatchQuiet.String()
	maxWait    = sandbox.WatchMaxWait.String()
	recheck    = sandbox.WatchRecheck.String()
	recheckMax = sandbox.WatchRecheckMax.String()
)

// ScheduleForms are a producer's schedules, as `keep help api` and keep.d.ts
// document them.
var ScheduleForms = []ScheduleForm{
	{`{ interval: "5m" }`, "Runs every interval: digits and one of s, m, h, d (5m, 1h, 1d), at least [policy] min_producer_interval (1m by default)."},
	{`{ cron: "0 9 * * *" }`, "Runs at each match of a 5-field cron expression (minute hour day-of-month month day-of-week)."},
	{`{ watch: "inbox" }`, "Runs when a file in the folder is created, written, renamed or removed (inotify), the changes of a burst coalesced into one run once the folder has gone " + quiet + " without a change (or " + maxWait + " after the first), and one more for those after the run started listing the folder, and every " +
		rescan + " anyway. The folder is relative to the first of [connectors.files] roots, or absolute inside one, and must exist at validate. Watching only wakes the producer: it still lists the folder, so a change the kernel drops is found by the next run. files.list leaves out a file still open for writing (one being copied in), and the producer looks again " + recheck + " later, the wait doubling up to " + recheckMax + " while the file stays open and unwritten, so it takes the file once its writer closes it, whole."},
	{`{ watch: "inbox", interval: "1h" }`, "Both: woken by the folder, and every interval instead of every " + rescan + " (cron works the same way beside watch)."},
}

// ScheduleForm is one way to write a producer's schedule.
type ScheduleForm struct {
	Form string `json:"form"`
	Doc  string `json:"doc"`
}

// scheduleType is keep.d.ts's Schedule.
func scheduleType() string {
	return `  /** A producer's schedule: an interval or a cron expression, a watched
   * folder beside or instead of them. watch: a folder under the files roots
   * ("inbox" is relative to the first root) whose changes wake the producer;
   * with neither interval nor cron it also runs every ` + rescan + `. A file
   * still open for writing is left out of files.list, and the producer
   * looks again until its writer closes it. */
  type Schedule =
    | { interval: string; watch?: string }
    | { cron: string; watch?: string }
    | { watch: string };
`
}

// WatchFolder resolves a producer's schedule.watch folder the way the files
// connector resolves a path (relative to the first root, or absolute inside
// one, symlinks followed) and checks it is a folder that exists there, and
// not one of keep's own places (files.Connector.Refuses). It returns the
// folder's real path, which is what the engine watches.
func WatchFolder(reg *connectors.Registry, dir string) (string, error) {
	c, ok := reg.Get("files")
	fc, hasRoots := c.(interface{ Roots() []string })
	if !ok || !hasRoots || len(fc.Roots()) == 0 {
		return "", errors.New("a watched folder must be under the files roots, and the files connector has none")
	}
	roots := fc.Roots()
	abs := filepath.Clean(dir)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(roots[0], dir)
	}
	outside := fmt.Errorf("watch folder %q is outside the files roots (%s)", dir, strings.Join(roots, ", "))
	for _, root := range roots {
		if !within(root, abs) {
			continue
		}
		real, err := connectors.RealPath(abs)
		if err != nil {
			return "", fmt.Errorf("watch folder %q: %w", dir, err)
		}
		realRoot, err := connectors.RealPath(root)
		if err != nil {
			return "", fmt.Errorf("watch folder %q: root %s: %w", dir, root, err)
		}
		if !within(realRoot, real) {
			return "", outside // a link out of the root
		}
		fi, err := os.Stat(real)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("watch folder %q does not exist (%s); create it first", dir, abs)
		case err != nil:
			return "", fmt.Errorf("watch folder %q: %w", dir, err)
		case !fi.IsDir():
			return "", fmt.Errorf("watch folder %q is a file, not a folder", dir)
		}
		// one of keep's own places is out of a workflow's reach, its watch
		// too; and as each change there is hidden (Hider), it would never
		// wake the producer
		if g, ok := c.(interface{ Refuses(path string) error }); ok {
			if err := g.Refuses(abs); err != nil {
				return "", fmt.Errorf("watch folder %q: %w", dir, err)
			}
		}
		return real, nil
	}
	return "", outside
}

// within reports whether abs is root or below it.
func within(root, abs string) bool {
	rel, err := filepath.Rel(root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
