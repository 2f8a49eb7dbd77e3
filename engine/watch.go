package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"keep/engine/api"
	"keep/engine/reference"
	"keep/sandbox"
	"keep/storage"
)

// folders wakes the producers whose schedule.watch folder changed (DESIGN
// §16 "Watched folders"). A change is a wake-up, never the source of truth:
// the producer still lists its folder, and its schedule (the interval, or
// sandbox.WatchRescan) runs it anyway, so an event the kernel drops loses
// nothing. Events coalesce in one flag per producer: however many arrive
// before its run starts, or before the run lists the folder, it runs once,
// and once more for those after. A burst settles first: the flag is set
// once the folder has gone sandbox.WatchQuiet without a change, or
// sandbox.WatchMaxWait after the burst's first, so a thousand files landing
// over a few tens of milliseconds are listed by one run, not by one that
// starts at the first and a second that lists them all again. A listing
// leaves out a file still being written (connectors.Call.Unfinished), and
// nothing tells of its writer's close (fsnotify reports the writes, not
// the close), so the producer is woken again after sandbox.WatchRecheck,
// doubled up to sandbox.WatchRecheckMax while the file stays open and no
// write comes. One goroutine blocks on the kernel's queue, and a timer runs
// only while a burst settles or a file is being written; nothing polls.
type folders struct {
	e *Engine

	mu    sync.Mutex
	w     *fsnotify.Watcher    // made with the first folder to watch
	byDir map[string][]watcher // real folder path → its producers
	// hides says, per watched folder, which of its entries are keep's own
	// files (files.Connector.Hider): their changes wake no one, as list
	// leaves them out; keep's database in a watched folder is written at
	// every run's commit, and each commit would wake the producer again
	hides map[string]func(name string) bool
	// ids: what each watched folder was as its watch began (os.SameFile)
	ids map[string]os.FileInfo
	// waits: a watched folder removed or renamed away → the folder it was
	// in, watched until the folder is there again
	waits map[string]string
	byWF  map[int64]watchedVersion  // what each workflow's watches were set for
	woken map[int64]map[string]bool // workflow → producers woken since their last run
	// settling: producers whose folder changed and has not settled yet
	settling map[watcher]*settling
	// rechecks: producers whose last listing of their folder left out a
	// file still being written
	rechecks map[watcher]*recheck
	// now and after are the clock and the timers of settling (time.Now
	// and time.AfterFunc; tests step them)
	now   func() time.Time
	after func(d time.Duration, f func()) interface{ Stop() bool }
	// warm starts a worker for the run a burst will wake (sandbox.Warm),
	// called as the burst begins: after an idle spell the pool's workers
	// have retired, and one starts while the burst settles
	warm func()
	// watch asks the kernel to watch a path ((*fsnotify.Watcher).Add);
	// tests make it fail as inotify does at its limits, which a test
	// cannot reach without taking the machine's watches from everyone
	watch  func(w *fsnotify.Watcher, path string) error
	closed bool
	done   chan struct{}
}

// settling is a producer's burst of changes not woken on yet.
type settling struct {
	first, last time.Time
	timer       interface{ Stop() bool }
}

// recheck is a producer's wait to list its folder again, a file there
// being written when it last did.
type recheck struct {
	wait  time.Duration
	timer interface{ Stop() bool }
	// changed: the folder changed since (a write, most likely): the writer
	// is at work, its close may be near, and the next wait starts short
	changed bool
	// listing: a listing is under way, and looked sets the next wait; a
	// timer firing meanwhile would only run the producer twice
	listing bool
}

type watcher struct {
	ws       *wfState
	producer string
}

type watchedVersion struct {
	version int
	dirs    []string
	// failed: a folder could not be watched (gone, or inotify refused);
	// the producer's next scheduled run tries again
	failed bool
	// unwatched: producer → the folder it names, not watched and not
	// awaited, and why; the workflow's views say so (Unwatched), as the
	// watch the person reads of in its schedule is not in effect
	unwatched map[string]api.UnwatchedFolder
}

func newFolders(e *Engine) *folders {
	return &folders{e: e, byDir: map[string][]watcher{}, hides: map[string]func(string) bool{}, ids: map[string]os.FileInfo{}, waits: map[string]string{}, byWF: map[int64]watchedVersion{}, woken: map[int64]map[string]bool{},
		settling: map[watcher]*settling{}, rechecks: map[watcher]*recheck{}, now: time.Now,
		after: func(d time.Duration, f func()) interface{ Stop() bool } { return time.AfterFunc(d, f) },
		warm:  func() { warmWorkers(e.pol.Limits, 1) },
		watch: (*fsnotify.Watcher).Add}
}

// update sets the watches of a workflow for the version the scheduler
// found: at once after a deploy, and again at a producer's run not woken by
// a watch (retry) when a folder could not be watched before, or the folder
// its producer names is no longer the one watched.
func (f *folders) update(ctx context.Context, ws *wfState, w *storage.Workflow, retry bool) {
	f.mu.Lock()
	have, ok := f.byWF[w.ID]
	f.mu.Unlock()
	if ok && have.version == w.Version && !retry {
		return
	}
	sc, err := f.e.script(ctx, w.ID, w.Version)
	if err != nil {
		return // the step reports a script that does not load
	}
	want := map[string][]string{} // real folder → producers
	// kept: folders of this version's watches that are gone and awaited
	// (await): they stay as they are, so that the folder made again is
	// watched at once, not at the run after this one
	kept := map[string]bool{}
	failed := false
	unwatched := map[string]api.UnwatchedFolder{}
	named := map[string]string{} // producer → its folder as the script names it
	for _, p := range sc.Workflow.Producers {
		if p.Schedule.Watch == "" {
			continue
		}
		dir, err := reference.WatchFolder(f.e.reg, p.Schedule.Watch)
		if err != nil {
			f.e.log.Warn("a watched folder is not watched; the producer runs on its schedule", "workflow", w.Name, "producer", p.Name, "err", err)
			failed = true
			if ok && have.version == w.Version {
				if d, ok := f.awaiting(w.ID, p.Name, have.dirs); ok {
					kept[d] = true
					continue // watched for again the moment it is there
				}
			}
			unwatched[p.Name] = api.UnwatchedFolder{Producer: p.Name, Folder: p.Schedule.Watch, Why: notWatchedWhy(err)}
			continue
		}
		want[dir] = append(want[dir], p.Name)
		named[p.Name] = p.Schedule.Watch
	}
	// a person's reason (deploy, run-now) runs a producer anyway
	pending := map[string]bool{}
	for _, names := range want {
		for _, n := range names {
			pending[n] = ws.triggerOf(n, "") != ""
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	// A watch can come to be on a folder that is no longer the one named,
	// with no event to say so: a folder above it renamed (the kernel's
	// watch goes along with the folder), a link in its path pointed
	// elsewhere. A run not woken by the watch looks where the folder is now.
	if ok && have.version == w.Version && !have.failed && f.holds(have.dirs, want) {
		return
	}
	next := watchedVersion{version: w.Version}
	for _, dir := range have.dirs {
		if kept[dir] {
			next.dirs = append(next.dirs, dir)
			continue
		}
		f.drop(dir, w.ID)
	}
	for dir, names := range want {
		if kept[dir] {
			continue // as it is, and its producers on it
		}
		if err := f.add(dir); err != nil {
			f.e.log.Warn("a watched folder is not watched; its producers run on their schedule", "workflow", w.Name, "folder", dir, "err", err)
			failed = true
			for _, n := range names {
				unwatched[n] = api.UnwatchedFolder{Producer: n, Folder: named[n], Why: notWatchedWhy(err)}
			}
			continue
		}
		for _, n := range names {
			t := watcher{ws, n}
			f.byDir[dir] = append(f.byDir[dir], t)
			// What changed before the watch began was seen by no one: files
			// dropped while the engine was stopped, into a folder made since
			// it could not be watched, or between a redeploy's old watch and
			// its new. The producer looks at once, not at its next rescan;
			// a run starting now anyway clears the flag as it starts.
			if !pending[n] {
				f.wake(t)
			}
		}
		next.dirs = append(next.dirs, dir)
	}
	next.failed = failed
	if len(unwatched) > 0 {
		next.unwatched = unwatched
	}
	f.byWF[w.ID] = next
}

// notWatchedWhy is why a folder could not be watched, in the person's
// words: inotify's limits are the kernel's bare errno ("no space left on
// device" for a full table of watches), which names neither inotify nor
// the setting that raises them.
func notWatchedWhy(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the system's limit on inotify watches is reached (raise it with sysctl fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE):
		// inotify_init's EMFILE is either limit; the first is the likelier
		return "the system's limit on inotify instances is reached (raise it with sysctl fs.inotify.max_user_instances), or keep's limit on open files"
	}
	return err.Error()
}

// unwatched is what of workflow wf's watches is not in effect, by
// producer; nil when all are, or keep is not started (nothing watches).
func (f *folders) unwatched(wf int64) map[string]api.UnwatchedFolder {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byWF[wf].unwatched // never written once set: a new update makes a new map
}

// awaiting is the folder among dirs that producer of workflow wf watched
// and that is gone and awaited, if there is one.
func (f *folders) awaiting(wf int64, producer string, dirs []string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, dir := range dirs {
		if _, gone := f.waits[dir]; !gone {
			continue
		}
		if _, ok := f.watcherOf(wf, producer, dir); ok {
			return dir, true
		}
	}
	return "", false
}

// add watches dir, starting the watcher with the first folder; f.mu is held.
func (f *folders) add(dir string) error {
	if f.w == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		f.w, f.done = w, make(chan struct{})
		go f.serve(w, f.done)
	}
	stale := false
	if len(f.byDir[dir]) > 0 {
		if _, gone := f.waits[dir]; gone || f.current(dir) {
			return nil // watched for another workflow already, or awaited
		}
		// the folder there is another than the one watched (holds): the
		// other workflows' producers were deaf to it too
		stale = true
		_ = f.w.Remove(dir)
		delete(f.ids, dir)
	}
	// what the watch is on, taken before it begins: a folder put in its
	// place between the two is found different at the next look, not
	// taken for the one watched
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if err := f.watch(f.w, dir); err != nil {
		return err
	}
	f.ids[dir] = fi
	f.hides[dir] = f.hider(dir)
	if stale {
		for _, t := range f.byDir[dir] {
			f.changedFor(t)
		}
	}
	return nil
}

// current reports whether the folder at dir is still the one its watch
// began on; f.mu is held.
func (f *folders) current(dir string) bool {
	was, ok := f.ids[dir]
	if !ok {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && os.SameFile(was, fi)
}

// holds reports whether a workflow's watches of dirs are those it wants
// (want: the folders its producers name, resolved now), each still on the
// folder there; f.mu is held.
func (f *folders) holds(dirs []string, want map[string][]string) bool {
	if len(dirs) != len(want) {
		return false
	}
	for _, dir := range dirs {
		if _, ok := want[dir]; !ok {
			return false
		}
		if _, gone := f.waits[dir]; !gone && !f.current(dir) {
			return false
		}
	}
	return true
}

// hider is the files connector's Hider for dir: keep's own files there.
func (f *folders) hider(dir string) func(string) bool {
	if c, ok := f.e.reg.Get("files"); ok {
		if h, ok := c.(interface {
			Hider(string) func(string) bool
		}); ok {
			return h.Hider(dir)
		}
	}
	return func(string) bool { return false }
}

// drop takes a workflow's producers off dir, and the watch when no other
// workflow's remain; f.mu is held.
func (f *folders) drop(dir string, wf int64) {
	for _, t := range f.byDir[dir] {
		if t.ws.id == wf {
			f.endRecheck(t)
		}
	}
	left := slices.DeleteFunc(f.byDir[dir], func(t watcher) bool { return t.ws.id == wf })
	if len(left) > 0 {
		f.byDir[dir] = left
		return
	}
	delete(f.byDir, dir)
	delete(f.hides, dir)
	delete(f.ids, dir)
	f.unwatch(dir) // gone already when the folder was removed
	if parent, ok := f.waits[dir]; ok {
		delete(f.waits, dir)
		f.unwatch(parent)
	}
}

// unwatch removes the kernel's watch of path unless a producer's folder or
// a wait still needs it; f.mu is held.
func (f *folders) unwatch(path string) {
	if f.w == nil || len(f.byDir[path]) > 0 {
		return
	}
	for _, p := range f.waits {
		if p == path {
			return
		}
	}
	_ = f.w.Remove(path)
}

// await watches the folder dir was in, dir (a watched folder) being gone,
// so that a folder made again there is watched at once and its producers
// woken, not at their next rescan; f.mu is held. A parent gone too is left
// to the rescan.
func (f *folders) await(dir string) {
	parent := filepath.Dir(dir)
	if f.w == nil || parent == dir {
		return
	}
	if _, ok := f.waits[dir]; !ok {
		if err := f.watch(f.w, parent); err != nil {
			return
		}
		f.waits[dir] = parent
	}
	f.back(dir) // made again before the parent was watched
}

// back watches dir again if it is a folder there again (not a link: where
// one leads was never checked against the roots, and the producer's next
// scheduled run resolves it afresh), and wakes its producers; f.mu is held.
func (f *folders) back(dir string) {
	parent, ok := f.waits[dir]
	if !ok {
		return
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || f.watch(f.w, dir) != nil {
		return
	}
	delete(f.waits, dir)
	f.unwatch(parent)
	f.ids[dir] = fi
	f.hides[dir] = f.hider(dir)
	for _, t := range f.byDir[dir] {
		v := f.byWF[t.ws.id]
		v.failed = false
		f.byWF[t.ws.id] = v
		f.changedFor(t)
	}
}

// serve turns the kernel's events into wake-ups until the watcher closes.
func (f *folders) serve(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			f.changed(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// a full queue lost events: every watched producer looks
			f.e.log.Warn("folder watch", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				f.wakeAll()
			}
		}
	}
}

// changed wakes the producers of the folder an event is in, or of the
// folder itself (removed or renamed: its watch is gone, and the folder it
// was in is watched until it is there again; failing that, a scheduled
// run sets it again).
func (f *folders) changed(ev fsnotify.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := filepath.Dir(ev.Name)
	if hide := f.hides[dir]; hide != nil && hide(filepath.Base(ev.Name)) {
		return // one of keep's own files: not there as far as a script can tell
	}
	if _, waited := f.waits[ev.Name]; waited && ev.Op.Has(fsnotify.Create) {
		f.back(ev.Name) // made again, or moved in
	}
	if _, self := f.byDir[ev.Name]; self && ev.Op.Has(fsnotify.Remove|fsnotify.Rename) {
		dir = ev.Name
		for _, t := range f.byDir[dir] {
			v := f.byWF[t.ws.id]
			v.failed = true
			f.byWF[t.ws.id] = v
		}
		f.await(dir)
	}
	for _, t := range f.byDir[dir] {
		f.changedFor(t)
	}
}

func (f *folders) wakeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ts := range f.byDir {
		for _, t := range ts {
			f.wake(t)
		}
	}
}

// changedFor notes a change for a producer, woken once the burst settles;
// f.mu is held.
func (f *folders) changedFor(t watcher) {
	if r := f.rechecks[t]; r != nil {
		r.changed = true
	}
	now := f.now()
	b := f.settling[t]
	if b == nil {
		b = &settling{first: now, last: now}
		f.settling[t] = b
		f.arm(t, b, sandbox.WatchQuiet)
		f.warm()
		return
	}
	b.last = now
}

// arm sets b's timer to look again in d; f.mu is held.
func (f *folders) arm(t watcher, b *settling, d time.Duration) {
	b.timer = f.after(d, func() { f.settle(t, b) })
}

// settle wakes t if its burst has been quiet long enough or has lasted
// long enough, and looks again when it would be otherwise. A timer that
// fires after its burst was ended (a listing, a wake-up) does nothing.
func (f *folders) settle(t watcher, b *settling) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.settling[t] != b {
		return
	}
	now := f.now()
	quietAt, capAt := b.last.Add(sandbox.WatchQuiet), b.first.Add(sandbox.WatchMaxWait)
	if now.Before(quietAt) && now.Before(capAt) {
		f.arm(t, b, min(quietAt.Sub(now), capAt.Sub(now)))
		return
	}
	delete(f.settling, t)
	f.wake(t)
}

// wake flags a producer and pokes its workflow; f.mu is held.
func (f *folders) wake(t watcher) {
	f.endBurst(t)
	m := f.woken[t.ws.id]
	if m == nil {
		m = map[string]bool{}
		f.woken[t.ws.id] = m
	}
	m[t.producer] = true
	t.ws.poke()
}

// isWoken reports whether a producer's folder changed since its last run
// started.
func (f *folders) isWoken(wf int64, producer string) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.woken[wf][producer]
}

// listed clears a producer's flag as its run starts listing dir (a real
// path), when dir is the folder it watches: a change seen before now is
// done, and a listing that starts after it sees it, so only what changes
// from now on wakes the producer again. A change made while the run was
// starting then costs no second run that lists everything again.
func (f *folders) listed(wf int64, producer, dir string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.watcherOf(wf, producer, dir); ok {
		delete(f.woken[wf], producer)
		f.endBurst(t)
		if r := f.rechecks[t]; r != nil {
			r.timer.Stop()
			r.listing = true
		}
	}
}

// looked is told, once a producer's listing of dir (a real path) is done,
// whether it left out a file still being written (unfinished). If so the
// producer is woken to look again, WatchRecheck after the last change seen
// in the folder, or twice the last wait (at most WatchRecheckMax) when
// none came since; once a listing leaves nothing out, no timer is left.
func (f *folders) looked(wf int64, producer, dir string, unfinished bool) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.watcherOf(wf, producer, dir)
	if !ok || f.closed {
		return
	}
	last := f.rechecks[t]
	f.endRecheck(t)
	if !unfinished {
		return
	}
	r := &recheck{wait: sandbox.WatchRecheck}
	if last != nil && !last.changed {
		r.wait = min(2*last.wait, sandbox.WatchRecheckMax)
	}
	f.rechecks[t] = r
	r.timer = f.after(r.wait, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.closed && f.rechecks[t] == r && !r.listing {
			f.wake(t) // r stays: the listing this wakes doubles its wait
		}
	})
}

// watcherOf is producer's watch of dir, if it has one; f.mu is held.
func (f *folders) watcherOf(wf int64, producer, dir string) (watcher, bool) {
	for _, t := range f.byDir[dir] {
		if t.ws.id == wf && t.producer == producer {
			return t, true
		}
	}
	return watcher{}, false
}

// endRecheck forgets t's wait to look again; f.mu is held.
func (f *folders) endRecheck(t watcher) {
	if r := f.rechecks[t]; r != nil {
		r.timer.Stop()
		delete(f.rechecks, t)
	}
}

// endBurst forgets t's settling burst, its changes seen; f.mu is held.
func (f *folders) endBurst(t watcher) {
	if b := f.settling[t]; b != nil {
		b.timer.Stop()
		delete(f.settling, t)
	}
}

// ran clears a producer's flag as its run starts: what changes from now on
// wakes it again.
func (f *folders) ran(wf int64, producer string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.woken[wf], producer)
}

// close ends the watches and waits for the goroutine serving them.
func (f *folders) close() {
	if f == nil {
		return // stopped already
	}
	f.mu.Lock()
	f.closed = true
	for t := range f.settling {
		f.endBurst(t)
	}
	for t := range f.rechecks {
		f.endRecheck(t)
	}
	w, done := f.w, f.done
	f.w = nil
	f.mu.Unlock()
	if w != nil {
		_ = w.Close()
		<-done
	}
}

// watching is the engine's folders while it is started, else nil (a drain
// runs what is due and stops; nothing wakes it).
func (e *Engine) watching() *folders {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.folders
}
