package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"keep/engine/api"
	"keep/sandbox"
)

const watchWorkflow = `export default Keep.workflow({
  name: "watch", topics: { file: {} },
  producers: {
    inbox: {
      publishes: ["file"],
      schedule: SCHEDULE,
      handler: async (ctx) => {
        for (const f of await ctx.files.list({ dir: "inbox" })) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.name, title: f.name });
          await ctx.publish("file", { messageId: f.name, inputId, payload: {} });
        }
      },
    },
  },
  consumers: {},
});`

// TestWatchedFolderWakesItsProducer: with the engine started and its clock
// standing still, a file dropped into a watched folder runs the producer
// (trigger "watch"), which lists it; nothing but the watch could have run
// it, its next scheduled run being five minutes away.
func TestWatchedFolderWakesItsProducer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inbox := filepath.Join(b.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	b.deploy("watch", strings.Replace(watchWorkflow, "SCHEDULE", `{ watch: "inbox" }`, 1))
	_, committed := startWatching(t, b)
	committed("at deploy") // due at deploy, on the empty folder
	if err := os.WriteFile(filepath.Join(inbox, "a.txt"), []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	committed("after a file was dropped")
	for {
		// the write may wake it a second time; the file is there after one
		if evs := b.events("watch", "file"); len(evs) == 1 && evs[0].MessageID == "a.txt" {
			break
		}
		committed("with the dropped file listed")
	}
	runs := b.runs("watch")
	if len(runs) < 2 || runs[0].Trigger != "watch" {
		t.Fatalf("runs = %+v, want the deploy's and one triggered by the watch", runs)
	}
}

// TestWatchInWords: keep workflows says a watched folder in words, alone
// (with its rescan) and beside an interval.
func TestWatchInWords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("inbox/x", "x")
	for schedule, want := range map[string]string{
		`{ watch: "inbox" }`:                 "Checks when inbox changes, and every 5 minutes",
		`{ watch: "inbox", interval: "1h" }`: "Checks every hour, and when inbox changes",
	} {
		b.deploy("watch", strings.Replace(watchWorkflow, "SCHEDULE", schedule, 1))
		if got := b.workflow("watch").Handlers[0].Schedule; got != want {
			t.Errorf("%s: %q, want %q", schedule, got, want)
		}
	}
}

// TestAFolderGoneIsWatchedAgain: a watched folder removed before the
// engine starts is not watched (the producer runs on its schedule); once it
// is made again, the producer's next run not woken by the watch (here
// run-now) watches it, and a file dropped then wakes the producer.
func TestAFolderGoneIsWatchedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inbox := deployWatchingInbox(t, b)
	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	ctx, committed := startWatching(t, b)
	committed("at deploy, the folder missing")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	// the run committed may not have ended yet: run-now is refused while a
	// run is in progress (DESIGN.md §5), and asked again
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := b.e.RunNow(ctx, "watch")
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "has a run in progress") || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	committed("after run-now")
	if err := os.WriteFile(filepath.Join(inbox, "b.txt"), []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		committed("after a file was dropped")
		if runs := b.runs("watch"); runs[0].Trigger == "watch" {
			break
		}
	}
}

// steppedTimers are a folders' settling clock and timers, stepped by hand.
type steppedTimers struct {
	now   time.Time
	armed []time.Duration // each timer's delay, in order
	fire  func()          // the last timer armed, until it fires or stops
	stops int
}

func stepTimers(f *folders) *steppedTimers {
	st := &steppedTimers{now: time.Unix(1_700_000_000, 0)}
	f.now = func() time.Time { return st.now }
	f.after = func(d time.Duration, fn func()) interface{ Stop() bool } {
		st.armed = append(st.armed, d)
		st.fire = func() { st.fire = nil; fn() }
		return stopFunc(func() bool { st.stops++; st.fire = nil; return true })
	}
	return st
}

// watchedInbox is a folders of its own, its settling stepped by hand,
// where producer "p" of workflow 1 watches /inbox.
func watchedInbox(t *testing.T) (*folders, *steppedTimers, *wfState) {
	b := setup(t)
	f := newFolders(b.e)
	f.warm = func() {} // TestWatchWakesCoalesce counts them
	st := stepTimers(f)
	ws := b.e.state(1)
	f.byDir["/inbox"] = []watcher{{ws, "p"}}
	return f, st, ws
}

type stopFunc func() bool

func (s stopFunc) Stop() bool { return s() }

// TestWatchWakesCoalesce: however many changes arrive before the
// producer's run starts, it is woken once, when the burst has settled; a
// change during the run wakes it once more; another folder's does not.
// Each burst asks for a worker once, as it begins.
func TestWatchWakesCoalesce(t *testing.T) {
	t.Parallel()
	f, st, ws := watchedInbox(t)
	warmed := 0
	f.warm = func() { warmed++ } // under f.mu, as changed calls it
	for range 100 {
		f.changed(fsEvent("/inbox/x"))
	}
	if warmed != 1 {
		t.Errorf("a burst of 100 changes asked for a worker %d times, want once, as it began", warmed)
	}
	if f.isWoken(1, "p") || len(ws.wake) != 0 || len(st.armed) != 1 || st.armed[0] != sandbox.WatchQuiet {
		t.Fatalf("during the burst: woken %v, %d pokes, timers %v; want none woken yet, one timer of %v", f.isWoken(1, "p"), len(ws.wake), st.armed, sandbox.WatchQuiet)
	}
	st.now = st.now.Add(sandbox.WatchQuiet)
	st.fire()
	if !f.isWoken(1, "p") || len(ws.wake) != 1 {
		t.Fatalf("after 100 changes, settled: woken %v, %d pokes pending; want woken, one poke", f.isWoken(1, "p"), len(ws.wake))
	}
	f.ran(1, "p")
	if f.isWoken(1, "p") {
		t.Fatal("still woken once its run started")
	}
	f.changed(fsEvent("/inbox/y"))
	st.now = st.now.Add(sandbox.WatchQuiet)
	st.fire()
	if !f.isWoken(1, "p") {
		t.Fatal("a change during the run does not wake it again")
	}
	f.ran(1, "p")
	f.changed(fsEvent("/elsewhere/z"))
	if f.isWoken(1, "p") || st.fire != nil {
		t.Fatal("a change in another folder woke it")
	}
	if warmed != 2 {
		t.Errorf("two bursts and another folder's change asked for a worker %d times, want twice", warmed)
	}
}

// TestAWatchBurstSettles: a producer is woken once its folder has gone
// sandbox.WatchQuiet without a change, the timer looking again while
// changes keep coming; a folder that never goes quiet wakes it
// sandbox.WatchMaxWait after the burst's first change; a listing of the
// folder ends a burst unwoken.
func TestAWatchBurstSettles(t *testing.T) {
	t.Parallel()
	f, st, ws := watchedInbox(t)

	start := st.now
	f.changed(fsEvent("/inbox/a"))
	st.now = start.Add(sandbox.WatchQuiet / 2)
	f.changed(fsEvent("/inbox/b"))
	st.now = start.Add(sandbox.WatchQuiet)
	st.fire() // a change came half-way: not quiet yet
	if f.isWoken(1, "p") || len(st.armed) != 2 || st.armed[1] != sandbox.WatchQuiet/2 {
		t.Fatalf("a change within the quiet time: woken %v, timers %v; want not yet, another of %v", f.isWoken(1, "p"), st.armed, sandbox.WatchQuiet/2)
	}
	st.now = start.Add(sandbox.WatchQuiet + sandbox.WatchQuiet/2)
	st.fire()
	if !f.isWoken(1, "p") {
		t.Fatal("not woken once the folder went quiet")
	}
	f.ran(1, "p")

	// a change every half quiet time, for twice the longest wait
	st.armed = nil
	first := st.now
	woken := time.Duration(-1)
	for step := time.Duration(0); step <= 2*sandbox.WatchMaxWait; step += sandbox.WatchQuiet / 2 {
		st.now = first.Add(step)
		f.changed(fsEvent("/inbox/c"))
		if st.fire != nil && !first.Add(step).Before(first.Add(sandbox.WatchQuiet)) {
			st.fire()
		}
		if f.isWoken(1, "p") {
			woken = step
			break
		}
	}
	if woken < 0 || woken > sandbox.WatchMaxWait {
		t.Fatalf("a folder changing without pause woke its producer after %v (timers %v); want by %v", woken, st.armed, sandbox.WatchMaxWait)
	}
	f.ran(1, "p")

	// listed: the burst is in the listing, and its timer wakes nothing
	f.changed(fsEvent("/inbox/d"))
	fire := st.fire
	f.listed(1, "p", "/inbox")
	if st.fire != nil || f.settling[watcher{ws, "p"}] != nil {
		t.Fatal("the listing left the burst settling")
	}
	st.now = st.now.Add(sandbox.WatchMaxWait)
	fire() // a timer that fired as it was stopped
	if f.isWoken(1, "p") {
		t.Fatal("a burst the listing saw woke the producer")
	}
}

// listingWorkflow is watchWorkflow with a call before its listing and one
// after, to a server that changes the folder while the run is at them.
const listingWorkflow = `export default Keep.workflow({
  name: "watch", topics: { file: {} },
  producers: {
    inbox: {
      publishes: ["file"],
      schedule: { watch: "inbox" },
      handler: async (ctx) => {
        await ctx.http.get({ url: "SERVER/before" });
        for (const f of await ctx.files.list({ dir: "inbox" })) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.name, title: f.name });
          await ctx.publish("file", { messageId: f.name, inputId, payload: {} });
        }
        await ctx.http.get({ url: "SERVER/after" });
      },
    },
  },
  consumers: {},
});`

// TestAListingEndsTheChangesBeforeIt: a change to the watched folder while
// its producer's run is under way but has not listed it yet is in the
// listing, and wakes no second run; one after the listing started does.
// The server changes the folder when the run reaches the call named, and
// answers once the watch has seen the change.
func TestAListingEndsTheChangesBeforeIt(t *testing.T) {
	for _, at := range []string{"before", "after"} {
		t.Run("a change "+at+" the listing", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			inbox := filepath.Join(b.root, "inbox")
			if err := os.MkdirAll(inbox, 0o700); err != nil {
				t.Fatal(err)
			}
			var armed atomic.Bool
			var wokenAtEnd atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !armed.Load() {
					return
				}
				f := b.e.watching()
				id := b.workflowRow("watch").ID
				if r.URL.Path == "/"+at {
					if err := os.WriteFile(filepath.Join(inbox, at+".txt"), []byte(at), 0o600); err != nil {
						t.Error(err)
					}
					for deadline := time.Now().Add(10 * time.Second); !f.isWoken(id, "inbox"); time.Sleep(time.Millisecond) {
						if time.Now().After(deadline) {
							t.Error("the watch never saw the change")
							break
						}
					}
				}
				if r.URL.Path == "/after" {
					// the run's last call: one run at a time, so a flag set
					// now is for a run after this one
					wokenAtEnd.Store(f.isWoken(id, "inbox"))
					armed.Store(false)
				}
			}))
			defer srv.Close()
			b.deploy("watch", strings.ReplaceAll(listingWorkflow, "SERVER", srv.URL))
			_, committed := startWatching(t, b)
			committed("at deploy")
			armed.Store(true)
			if err := os.WriteFile(filepath.Join(inbox, "first.txt"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			for wokenAtEnd.Load() == nil {
				committed("after a file was dropped")
			}
			woken := wokenAtEnd.Load().(bool)
			if want := at == "after"; woken != want {
				t.Fatalf("at the run's end its producer is woken: %v, want %v", woken, want)
			}
			if at == "after" {
				// the run that follows lists the file the listing missed
				for !slices.ContainsFunc(b.events("watch", "file"), func(e api.EventView) bool { return e.MessageID == "after.txt" }) {
					committed("after the change past the listing")
				}
			}
		})
	}
}

// TestValidateChecksTheWatchedFolder: keep validate (and deploy) refuse a
// watched folder outside the files roots, missing, or a file, at the
// folder's own line and column; one under the first root passes, beside an
// interval too.
func TestValidateChecksTheWatchedFolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write("inbox/keep.txt", "x")
	cases := []struct{ schedule, want string }{
		{`{ watch: "inbox" }`, ""},
		{`{ watch: "inbox", interval: "1h" }`, ""},
		{`{ watch: "` + filepath.Join(b.root, "inbox") + `" }`, ""},
		{`{ watch: "../elsewhere" }`, "outside the files roots"},
		{`{ watch: "/tmp" }`, "outside the files roots"},
		{`{ watch: "missing" }`, "does not exist"},
		{`{ watch: "inbox/keep.txt" }`, "is a file, not a folder"},
		{`{ watch: 3 }`, "must be a folder under the files roots"},
	}
	for _, c := range cases {
		src := strings.Replace(watchWorkflow, "SCHEDULE", c.schedule, 1)
		sc, err := b.e.Validate("watch.js", []byte(src))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.schedule, err)
			} else if sc.Workflow.Producers[0].Schedule.Watch == "" {
				t.Errorf("%s: no watch in the schedule %+v", c.schedule, sc.Workflow.Producers[0].Schedule)
			}
			continue
		}
		var ve *sandbox.ValidationError
		if !errors.As(err, &ve) || len(ve.Diagnostics) != 1 || !strings.Contains(ve.Diagnostics[0].Message, c.want) {
			t.Errorf("%s: %v, want one diagnostic saying %q", c.schedule, err, c.want)
			continue
		}
		// at the folder's literal on line 6, after "      schedule: "; at
		// the schedule when the folder is no string
		col := 7
		if i := strings.Index(c.schedule, `"`); i >= 0 {
			col = 17 + i
		}
		if d := ve.Diagnostics[0]; d.Line != 6 || d.Col != col {
			t.Errorf("%s: at %d:%d, want 6:%d", c.schedule, d.Line, d.Col, col)
		}
	}
}

func fsEvent(name string) fsnotify.Event { return fsnotify.Event{Name: name, Op: fsnotify.Create} }

// startWatching starts b's engine and returns its context and a wait for
// the next committed run of workflow "watch" (what names the moment, for
// the failure).
func startWatching(t *testing.T, b *bundle) (context.Context, func(what string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	notes, stop := b.e.Subscribe()
	t.Cleanup(stop)
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.e.Stop(context.Background()) })
	return ctx, func(what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case n := <-notes:
				if n.Kind == api.NoteRunCommitted && n.Workflow == "watch" {
					return
				}
			case <-deadline:
				t.Fatalf("no producer run committed %s", what)
			}
		}
	}
}

// TestKeepsOwnFilesWakeNoWatch: a watched folder that holds keep's
// database (a files root over the database's folder) is written at every
// commit; those writes wake no producer, as list leaves those files out.
// Before, each run's commit woke its producer again, and a producer
// watching such a folder ran without end (hundreds of runs a second, no
// file changed). Real inotify: the database's log is written, then a file
// in a second watched folder; the kernel's events come in order, so once
// the second folder's producer is settling, the log's write has been seen.
func TestKeepsOwnFilesWakeNoWatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dbDir := rootAtTheDatabase(t, b)
	f := newFolders(b.e)
	t.Cleanup(f.close)
	f.warm = func() {}
	stepTimers(f)
	other := filepath.Join(dbDir, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	ws := b.e.state(1)
	scan, sentinel := watcher{ws, "scan"}, watcher{ws, "sentinel"}
	f.mu.Lock()
	for dir, w := range map[string]watcher{dbDir: scan, other: sentinel} {
		if err := f.add(dir); err != nil {
			f.mu.Unlock()
			t.Fatal(err)
		}
		f.byDir[dir] = append(f.byDir[dir], w)
	}
	f.mu.Unlock()
	for _, name := range []string{"keep.db-wal", "keep.db-journal", "keep.log"} {
		fh, err := os.OpenFile(filepath.Join(dbDir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		fh.Write([]byte("x"))
		fh.Close()
	}
	if err := os.WriteFile(filepath.Join(other, "x.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		f.mu.Lock()
		seen := f.settling[sentinel] != nil
		f.mu.Unlock()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch never saw the file in the second folder")
		}
	}
	f.mu.Lock()
	woke := f.settling[scan] != nil || f.woken[1]["scan"]
	f.mu.Unlock()
	if woke {
		t.Fatal("writes to keep's own files woke the producer watching their folder")
	}
	// a folder of the person's made there still wakes it (every file
	// directly beside the database is keep's)
	if err := os.Mkdir(filepath.Join(dbDir, "demo"), 0o700); err != nil {
		t.Fatal(err)
	}
	f.changed(fsnotify.Event{Name: filepath.Join(dbDir, "demo"), Op: fsnotify.Create})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settling[scan] == nil {
		t.Fatal("a folder of the person's beside keep's database woke nothing")
	}
}

// TestAWatchLooksAtWhatChangedBeforeIt: a file dropped into a watched
// folder while the engine was stopped is listed as soon as the engine
// starts again, not at the producer's next rescan (five minutes on, and
// the test's clock stands still): the watch began after the change, and
// its beginning wakes the producer. Before, nothing ran.
func TestAWatchLooksAtWhatChangedBeforeIt(t *testing.T) {
	b := setup(t)
	inbox := filepath.Join(b.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	b.deploy("watch", strings.Replace(watchWorkflow, "SCHEDULE", `{ watch: "inbox" }`, 1))
	_, committed := startWatching(t, b)
	committed("at deploy")
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inbox, "while-stopped.txt"), []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	_, committed = startWatching(t, b)
	for !slices.ContainsFunc(b.events("watch", "file"), func(e api.EventView) bool { return e.MessageID == "while-stopped.txt" }) {
		committed("after the restart")
	}
	if runs := b.runs("watch"); runs[0].Trigger != "watch" {
		t.Fatalf("the run after the restart: %+v, want one woken by the watch", runs[0])
	}
}

// TestAFolderMadeAgainIsWatchedAtOnce: a watched folder removed and made
// again (rm -rf inbox && mkdir inbox, or another folder renamed into its
// place) is watched again as soon as it is there: a file dropped into it
// wakes the producer, not its next rescan five minutes on (the test's clock
// stands still). Before, only a run not woken by the watch set it again.
func TestAFolderMadeAgainIsWatchedAtOnce(t *testing.T) {
	for _, how := range []string{"made again", "renamed into place"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			inbox := deployWatchingInbox(t, b)
			_, committed := startWatching(t, b)
			committed("at deploy")
			if err := os.Remove(inbox); err != nil {
				t.Fatal(err)
			}
			committed("once the folder was removed")
			if how == "made again" {
				if err := os.Mkdir(inbox, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				staged := filepath.Join(b.root, "staged")
				if err := os.Mkdir(staged, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(staged, inbox); err != nil {
					t.Fatal(err)
				}
			}
			// the folder's return wakes the producer too; a file in it
			// may be listed by that run or the next
			if err := os.WriteFile(filepath.Join(inbox, "b.txt"), []byte("b"), 0o600); err != nil {
				t.Fatal(err)
			}
			committed("after a file was dropped into the folder there again")
			// and the folder is watched: a later file wakes it again
			n := len(b.runs("watch"))
			if err := os.WriteFile(filepath.Join(inbox, "c.txt"), []byte("c"), 0o600); err != nil {
				t.Fatal(err)
			}
			for len(b.runs("watch")) <= n {
				committed("after a second file")
			}
		})
	}
}

// deployWatchingInbox makes the root's inbox and deploys "watch", whose
// producer is woken by inbox and lists the root, which stays when inbox
// goes: listing a folder that is missing fails the run (files.list names
// it), and these runs must commit. It returns inbox.
func deployWatchingInbox(t *testing.T, b *bundle) string {
	t.Helper()
	inbox := filepath.Join(b.root, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("SCHEDULE", `{ watch: "inbox" }`, `ctx.files.list({ dir: "inbox" })`,
		`ctx.files.list({ dir: "." })`).Replace(watchWorkflow)
	b.deploy("watch", src)
	return inbox
}

// rootAtTheDatabase gives b's engine connectors whose one files root is
// the database's own folder, and returns it.
func rootAtTheDatabase(t *testing.T, b *bundle) string {
	t.Helper()
	dbDir := filepath.Dir(b.dbPath)
	cfg := b.cfg
	cfg.Connectors.Files.Roots = []string{dbDir}
	reg, err := Connectors(cfg, ConnectorOpts{DBPath: b.dbPath})
	if err != nil {
		t.Fatal(err)
	}
	b.e.reg = reg
	return dbDir
}
