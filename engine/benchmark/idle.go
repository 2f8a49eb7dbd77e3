package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// idleWorkflow is one of the workflows the idle daemon holds: a producer
// due hourly and a consumer of what it publishes.
const idleWorkflow = `
export default Keep.workflow({
  name: "idle-%d",
  topics: { "item": {} },
  producers: {
    poll: {
      publishes: ["item"],
      schedule: { interval: "1h" },
      handler: async (ctx, state) => ({ polls: (state?.polls ?? 0) + 1 }),
    },
  },
  consumers: {
    record: Keep.consumer({
      subscribe: ["item"],
      async prepare(ctx) {
        const [ev] = await ctx.peek("item", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return { reservations: [{ topic: "item", ids: [ev.messageId] }], data: { line: ev.messageId + "\n" } };
      },
      async mutate(ctx, prepared) {
        await ctx.files.append({ path: "idle.log", content: prepared.data.line });
      },
      async next() {},
    }),
  },
});
`

// idle deploys o.IdleWorkflows workflows, runs each producer once (so the
// next run of each is an hour away), then starts the keep binary as a
// daemon on that database and samples its CPU time (user + system, all
// threads, its script workers' included) over o.IdleWindow once its
// start-up has settled (settledTicks).
func idle(ctx context.Context, o Options, r *Results) error {
	if o.DaemonBinary == "" {
		o.Logf("idle daemon: skipped (no keep binary given)")
		return nil
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		o.Logf("idle daemon: skipped (no /proc on this system)")
		return nil
	}
	k, err := newEngine(ctx, o.Dir)
	if err != nil {
		return err
	}
	for i := range o.IdleWorkflows {
		if err := k.deploy(ctx, fmt.Sprintf("idle-%d", i), fmt.Sprintf(idleWorkflow, i)); err != nil {
			k.close()
			return err
		}
	}
	if err := k.e.Drain(ctx); err != nil {
		k.close()
		return err
	}
	if err := k.close(); err != nil {
		return err
	}
	cfgPath, err := daemonConfig(o.Dir, k.root)
	if err != nil {
		return err
	}
	d, err := startDaemon(ctx, o.DaemonBinary, o.Dir, k.path, cfgPath)
	if err != nil {
		return err
	}
	defer d.kill()
	d.client.Close() // the idle daemon is not talked to
	pid := d.pid
	t0, err := settledTicks(pid, time.Second, 30*time.Second)
	if err != nil {
		return err
	}
	w0 := time.Now()
	select {
	case <-time.After(o.IdleWindow):
	case err := <-d.exited:
		d.done = true
		return fmt.Errorf("the daemon exited while idle: %v: %s", err, d.why())
	case <-ctx.Done():
		return ctx.Err()
	}
	t1, err := treeTicks(pid)
	if err != nil {
		return err
	}
	window := time.Since(w0)
	hwm := treePeakKiB(pid) // with its script workers'
	// its workers retire after idling a while (sandbox's idleRetire, 10 s):
	// what an idle keep holds is the daemon once they have
	settled := time.Now().Add(time.Minute)
	for len(childPIDs(pid)) > 0 && time.Now().Before(settled) {
		select {
		case <-time.After(250 * time.Millisecond):
		case err := <-d.exited:
			d.done = true
			return fmt.Errorf("the daemon exited while idle: %v: %s", err, d.why())
		}
	}
	idleKiB, err := rssKiB(pid)
	if err != nil {
		return err
	}
	for _, w := range childPIDs(pid) { // none, unless they outlived the minute
		if k, err := rssKiB(w); err == nil {
			idleKiB += k
		}
	}
	if err := d.stop(); err != nil {
		return err
	}
	cpu := float64(t1-t0) / clockTicks
	r.IdleCPUPercent = cpu / window.Seconds() * 100
	r.DaemonRSSMB = float64(hwm) / 1024
	r.DaemonIdleRSSMB = float64(idleKiB) / 1024
	o.Logf("idle daemon: %d workflows, %.2f s of CPU over %s: %.3f%%; peak RSS %.1f MB, %.1f MB once its workers retired",
		o.IdleWorkflows, cpu, window.Round(time.Millisecond), r.IdleCPUPercent, r.DaemonRSSMB, r.DaemonIdleRSSMB)
	return nil
}

// settledTicks waits for the start-up of the daemon at pid to end — its
// CPU time (its workers' included) unchanged over quiet — and returns that
// time, or what it is after most. A fixed wait measured the tail of the
// start-up (50 scripts loaded in its workers) on a busy machine as idle
// CPU: 2.2% in one run, 0.000% in the next. A daemon that kept waking is
// still measured: it settles late or not at all, and the window after
// catches what it wakes for.
func settledTicks(pid int, quiet, most time.Duration) (int64, error) {
	end := time.Now().Add(most)
	last, err := treeTicks(pid)
	for err == nil && time.Now().Before(end) {
		time.Sleep(quiet)
		var now int64
		if now, err = treeTicks(pid); err == nil && now == last {
			return now, nil
		}
		last = now
	}
	return last, err
}

// peakRSSKiB is a process's VmHWM.
func peakRSSKiB(pid int) (int64, error) { return statusKiB(pid, "VmHWM:") }

// rssKiB is a process's VmRSS.
func rssKiB(pid int) (int64, error) { return statusKiB(pid, "VmRSS:") }

func statusKiB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no " + strings.TrimSuffix(field, ":"))
}

// isolatedEnv is this process's environment without anything that would
// point keep at the user's own files.
func isolatedEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KEEP_DB", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"))
}
