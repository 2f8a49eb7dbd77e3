//go:build linux

package clitest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/daemon"
	"keep/storage/lazyfs"
)

// powercutWorkflow lists the inbox folder every second, one input per file,
// and posts each file's name to the sink, with a reconcile URL.
func powercutWorkflow(url string) string {
	return strings.ReplaceAll(`
const SINK = "SINKURL";

export default Keep.workflow({
  name: "powercut",
  topics: { file: {} },
  producers: {
    inbox: {
      publishes: ["file"],
      schedule: { interval: "1s" },
      handler: async (ctx) => {
        for (const f of await ctx.files.list({ dir: "inbox" })) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.name, title: "File " + f.name });
          await ctx.publish("file", { messageId: f.name, inputId, payload: { id: f.name } });
        }
      },
    },
  },
  consumers: {
    post: Keep.consumer({
      subscribe: ["file"],
      async prepare(ctx) {
        const [e] = await ctx.peek("file", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return {
          reservations: [{ topic: "file", ids: [e.messageId] }],
          data: { id: e.payload.id },
          ui: { title: "Post " + e.payload.id },
        };
      },
      async mutate(ctx, p) {
        await ctx.http.request({
          method: "POST",
          url: SINK + "/items",
          json: { id: p.data.id },
          reconcile: { url: SINK + "/items/" + p.data.id },
        });
      },
      async next() {},
    }),
  },
});
`, "SINKURL", url)
}

// TestPowerCut runs keep's data directory on lazyfs, a file system that
// holds written data back until it is synced, and cuts the power (kills
// every keep process, drops what was not synced) again and again during a
// files→webhook flow, some cuts in the middle of `keep gc` (a checkpoint of
// the log into the database) and `keep backup`. It checks what the README's
// "what reaches the disk when" promises:
//
//   - keep starts after every cut, and PRAGMA integrity_check is ok;
//   - every item the webhook got is an input keep still has after the cut
//     (its in_flight row, and the input under it, were on disk before the
//     call went out);
//   - no item reaches the webhook twice under different keys, and every
//     file ends posted once (or waits in Attention);
//   - a backup that `keep backup` reported written survives the cut.
//
// go test cuts 9 times; KEEP_POWERCUT_N=100 is the long mode.
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts the power under a real daemon for about a minute")
	}
	cuts := envCount(t, "KEEP_POWERCUT_N", 9, 0)
	seed := envSeed(t, "KEEP_POWERCUT_SEED")
	rng := rand.New(rand.NewSource(seed))

	e := newEnv(t, "allow")
	disk, data := filepath.Join(e.dir, "disk"), filepath.Dir(e.db)
	for _, d := range []string{disk, data, filepath.Join(e.root, "inbox")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	lfs, err := lazyfs.Mount(disk, data)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and FUSE cannot mount here (.ci/servers/fuse.sh installs fuse3): %v", err)
		}
		t.Skipf("FUSE cannot mount here (needs /dev/fuse and root or fuse3): %v", err)
	}
	t.Cleanup(func() {
		if err := lfs.Close(); err != nil {
			t.Error(err)
		}
	})

	sink := newCrashSink(t, seed, 3)
	e.writeConfig(fmt.Sprintf(`[policy]
min_producer_interval = "1s"
default_mutation_mode = "allow"
backoff_base = "100ms"
backoff_max = "1s"
handler_timeout = "5s"
crash_limit = 0

[connectors.files]
roots = [%q]
`, e.root))
	e.ok("deploy", e.file(e.dir, "powercut.js", powercutWorkflow(sink.srv.URL)))

	const perCut = 12
	files := 0
	var backups []string
	for i := 0; i < cuts; i++ {
		for j := 0; j < perCut; j++ {
			e.file(e.root, filepath.Join("inbox", crashItemID(files)), `{"n":`+strconv.Itoa(files)+`}`)
			files++
		}
		d := startDaemon(t, e)
		awaitSocket(t, e, d, 60*time.Second)
		checkAcknowledged(t, e, sink, i)

		time.Sleep(time.Duration(100+rng.Intn(600)) * time.Millisecond)
		var op *exec.Cmd
		var opDone chan error
		backup := filepath.Join(data, fmt.Sprintf("backup-%d.db", i))
		switch i % 3 {
		case 1:
			op = e.command(context.Background(), "gc")
		case 2:
			op = e.command(context.Background(), "backup", backup)
		}
		if op != nil {
			op.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := op.Start(); err != nil {
				t.Fatal(err)
			}
			opDone = make(chan error, 1)
			go func() { opDone <- op.Wait() }()
			// from before the command has opened anything to after it is done
			time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
		}

		// the power goes: every process at once, then the disk's caches
		if running, err := d.kill(t); !running {
			t.Fatalf("cut %d: the daemon exited by itself before the cut: %v\nstderr: %s", i, err, d.errb.String())
		}
		opOK := false
		if op != nil {
			select {
			case err := <-opDone:
				opOK = err == nil
			default:
				_ = syscall.Kill(-op.Process.Pid, syscall.SIGKILL)
				<-opDone
			}
		}
		if err := lfs.Cut(); err != nil {
			t.Fatalf("cut %d: %v", i, err)
		}
		if i%3 == 2 && opOK {
			backups = append(backups, backup)
		}
		t.Logf("cut %2d: %d/%d files at the sink; %s finished before the cut: %v; %+v",
			i, sink.appliedCount(), files, opName(i), opOK, lfs.Stats())
	}

	// A last daemon finishes the work; it is stopped cleanly.
	d := startDaemon(t, e)
	stopped := false
	defer func() {
		if !stopped {
			d.kill(t)
		}
	}()
	awaitSocket(t, e, d, 60*time.Second)
	checkAcknowledged(t, e, sink, cuts)
	var counts api.Counts
	settled := func() bool {
		return counts.InputsPending == 0 && counts.InputsSkipped == 0 &&
			counts.InputsDone+counts.InputsNeedsAttention == files
	}
	deadline := time.Now().Add(60*time.Second + time.Duration(files)*200*time.Millisecond)
	for {
		counts = jsonOf[api.WorkflowDetail](e, "status", "powercut").Counts
		if settled() || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !settled() {
		t.Errorf("after the cuts a last daemon leaves inputs %+v; the sink has %d/%d files", counts, sink.appliedCount(), files)
		t.Logf("keep status powercut:\n%s", e.keep("status", "powercut").stdout)
		if b, err := os.ReadFile(filepath.Join(data, "keep.log")); err == nil {
			t.Logf("keep.log:\n%s", b[max(0, len(b)-6000):])
		}
	}
	ms := jsonOf[[]api.MutationView](e, "mutations", "powercut")
	attention := jsonOf[[]api.AttentionItem](e, "attention")
	d.stop(t)
	stopped = true
	e.ok("drain")
	checkCrashDB(t, e.db, 0)

	for _, b := range backups {
		if v, err := checkBackupFile(b); err != nil {
			t.Errorf("keep backup reported %s written before the cut, and after it: %v", filepath.Base(b), err)
		} else {
			t.Logf("backup %s survived the cut (%d runs)", filepath.Base(b), v)
		}
	}

	sink.mu.Lock()
	defer sink.mu.Unlock()
	for i := 0; i < files; i++ {
		switch n := sink.applied[crashItemID(i)]; {
		case n == 0 && counts.InputsNeedsAttention == 0:
			t.Errorf("%s never reached the sink (lost)", crashItemID(i))
		case n > 1:
			t.Errorf("%s reached the sink %d times under different idempotency keys", crashItemID(i), n)
		}
	}
	for key, n := range sink.reapplied {
		t.Errorf("idempotency key %s was POSTed again %d time(s) after it had been applied", key, n)
	}
	waiting := map[string]bool{}
	for _, a := range attention {
		if a.Kind == api.AttentionReconciliation {
			waiting[a.ID] = true
		}
	}
	for _, m := range ms {
		switch m.Status {
		case "in_flight":
			t.Errorf("mutation %s (%s) is still in_flight after a clean stop", m.ID, m.UITitle)
		case "needs_reconcile", "indeterminate":
			if !waiting[m.ID] {
				t.Errorf("mutation %s (%s) is %s and not in keep attention", m.ID, m.UITitle, m.Status)
			}
		}
	}
	s := lfs.Stats()
	t.Logf("%d cuts dropped %d unsynced bytes in all (%d writes, %d syncs); %d POSTs, %d reconcile GETs, %d mutations",
		s.Cuts, s.Dropped, s.Writes, s.Syncs, sink.posts, sink.gets, len(ms))
	if s.Dropped == 0 {
		t.Errorf("no cut dropped any unsynced data: the test did not test power cuts")
	}
}

// checkAcknowledged checks, on a daemon just started after a cut, that
// every file the sink got is an input keep has: the sink got it only after
// keep had its in_flight row on disk.
func checkAcknowledged(t *testing.T, e *env, sink *crashSink, cut int) {
	t.Helper()
	c, err := daemon.Dial(daemon.SocketPath(e.db))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// what the sink got is read before keep's inputs: every input is
	// committed before its POST, so the listing after holds them all,
	// while the daemon, running, may post what a listing read first did
	// not yet hold
	sink.mu.Lock()
	got := slices.Collect(maps.Keys(sink.applied))
	sink.mu.Unlock()
	have := map[string]bool{}
	for _, in := range allInputs(ctx, t, c, "powercut") {
		have[in.ExternalID] = true
	}
	for _, id := range got {
		if !have[id] {
			t.Errorf("after cut %d: the sink got %s, and keep has no input for it", cut, id)
		}
	}
}

// checkBackupFile opens a backup read-only: it must pass integrity_check.
func checkBackupFile(path string) (int, error) {
	db, err := sql.Open("sqlite", checkDSN(path))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil {
		return 0, err
	}
	if check != "ok" {
		return 0, fmt.Errorf("integrity_check: %s", check)
	}
	var n int
	err = db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	return n, err
}

func opName(i int) string {
	return [...]string{"a run", "keep gc", "keep backup"}[i%3]
}
