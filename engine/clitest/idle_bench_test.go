package clitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// idleWorkflow is a workflow with nothing to do: an hourly producer that
// publishes nothing and a consumer with nothing to consume.
func idleWorkflow(name string) string {
	return strings.ReplaceAll(`
export default Keep.workflow({
  name: "NAME",
  topics: { tick: {} },
  producers: {
    hourly: {
      publishes: ["tick"],
      schedule: { interval: "1h" },
      handler: async (ctx, state) => ({ runs: (state?.runs ?? 0) + 1 }),
    },
  },
  consumers: {
    idle: Keep.consumer({
      subscribe: ["tick"],
      async prepare(ctx) {
        const [e] = await ctx.peek("tick", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "tick", ids: [e.messageId] }], data: {} };
      },
      async mutate() {},
      async next() {},
    }),
  },
});
`, "NAME", name)
}

// clockTicks is the unit of /proc/PID/stat's utime and stime.
func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n <= 0 {
		return 100
	}
	return float64(n)
}

// cpuTicks is utime+stime of pid, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// the fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return utime + stime, nil
}

// rssMB is the resident set of pid in MB.
func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// BenchmarkIdleDaemon measures the CPU a keep daemon with 50 deployed, idle
// workflows uses (DESIGN.md §11; it should be ~0%). Each b.N is one window
// of idleWindow; the metric is the daemon's CPU time over the windows as a
// percentage of one core. Nothing is asserted.
func BenchmarkIdleDaemon(b *testing.B) {
	const (
		workflows  = 50
		settle     = time.Second
		idleWindow = 5 * time.Second
	)
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc")
	}
	dir := b.TempDir()
	e := &env{dir: dir, db: filepath.Join(dir, "data", "keep.db"), config: filepath.Join(dir, "config.toml"),
		root: filepath.Join(dir, "root")}
	if err := os.MkdirAll(e.root, 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := fmt.Sprintf("[policy]\ndefault_mutation_mode = \"allow\"\n\n[connectors.files]\nroots = [%q]\n", e.root)
	if err := os.WriteFile(e.config, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	run := func(args ...string) {
		b.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := e.command(ctx, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("keep %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
	for i := range workflows {
		name := fmt.Sprintf("idle-%02d", i)
		path := filepath.Join(dir, name+".js")
		if err := os.WriteFile(path, []byte(idleWorkflow(name)), 0o600); err != nil {
			b.Fatal(err)
		}
		run("deploy", path)
	}
	// the first producer runs happen now, not in the measured windows
	run("drain", "--timeout", "1m")

	d := startDaemon(b, e)
	defer func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(time.Minute):
			d.kill(b)
		}
	}()
	awaitSocket(b, e, d, 30*time.Second)
	time.Sleep(settle)

	pid := d.cmd.Process.Pid
	hz := clockTicks()
	b.ResetTimer()
	var ticks int64
	var wall time.Duration
	for range b.N {
		t0, err := cpuTicks(pid)
		if err != nil {
			b.Fatal(err)
		}
		w0 := time.Now()
		time.Sleep(idleWindow)
		t1, err := cpuTicks(pid)
		if err != nil {
			b.Fatal(err)
		}
		ticks += t1 - t0
		wall += time.Since(w0)
	}
	b.StopTimer()
	b.ReportMetric(100*float64(ticks)/hz/wall.Seconds(), "cpu%")
	b.ReportMetric(rssMB(pid), "rss-MB")
}
