package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

// keepBin is the real binary, built once by TestMain, for the idle daemon.
var keepBin string

func TestMain(m *testing.M) { kit.RunWithKeep(m, &keepBin) }

// TestRun runs every measurement at a tiny scale and checks that each
// figure is there and plausible. It asserts no target: timings depend on
// the machine.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	res, err := Run(ctx, Options{Dir: dir, Inputs: 200, HistorySizes: []int{1000, 5000}, IdleWorkflows: 3,
		IdleWindow: time.Second, DaemonBinary: keepBin, YearDays: 40, YearInputsPerDay: 10, FilesPostItems: 50, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	positive := map[string]float64{
		"pipeline_runs_per_s": res.PipelineRunsPerS, "pipeline_seconds": res.PipelineSeconds,
		"floor_commits_per_s": res.FloorCommitsPerS, "commits_per_run": res.CommitsPerRun,
		"floor_ratio": res.FloorRatio, "wake_latency_ms.p50": res.WakeLatencyMS.P50,
		"wake_latency_ms.p99": res.WakeLatencyMS.P99, "rss_mb": res.RSSMB, "daemon_rss_mb": res.DaemonRSSMB, "daemon_idle_rss_mb": res.DaemonIdleRSSMB,
		"files_post_items_per_s": res.FilesPostItemsPerS, "files_post_cpu_s_per_1000": res.FilesPostCPUSPer1000,
	}
	for _, n := range []string{"1000", "5000"} {
		positive["peek_ms["+n+"]"] = res.PeekMS[n]
		positive["inputs_page_ms["+n+"]"] = res.InputsPageMS[n]
		positive["history_build_s["+n+"]"] = res.HistoryBuildS[n]
	}
	for name, v := range positive {
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	if res.PipelineConsumerRuns != 400 {
		t.Errorf("pipeline_consumer_runs = %d, want 400 (two consumers × 200 inputs)", res.PipelineConsumerRuns)
	}
	// a consumer run that makes a call commits four times — its start, its
	// prepared checkpoint with the in_flight row, the outcome, the run's
	// commit — or three when its next is empty (the outcome and the commit
	// are one: consumer B's), and one that finds nothing twice; those are a
	// few
	if res.CommitsPerRun < 3.5 || res.CommitsPerRun > 3.75 || res.CommitsPerRunSource != "wal" {
		t.Errorf("commits_per_run = %v (%s), want 3.5 (A's four, B's three) and a little more, counted from the WAL", res.CommitsPerRun, res.CommitsPerRunSource)
	}
	// every consumer run of the pipeline makes one call: its in_flight row
	// is the one commit that must wait for the disk
	if res.SyncedCommitsPerRun != 1 {
		t.Errorf("synced_commits_per_run = %v, want 1 (the in_flight row's)", res.SyncedCommitsPerRun)
	}
	if res.FramesPerRun < res.CommitsPerRun {
		t.Errorf("wal_frames_per_run = %v, fewer than the %v commits", res.FramesPerRun, res.CommitsPerRun)
	}
	if res.WakeLatencyMS.P99 < res.WakeLatencyMS.P50 || res.WakeSamples != wakeSamples {
		t.Errorf("wake latency %+v over %d samples", res.WakeLatencyMS, res.WakeSamples)
	}
	if res.IdleCPUPercent < 0 || res.IdleCPUPercent > 100*float64(res.Machine.CPUs) {
		t.Errorf("idle_cpu_percent = %v", res.IdleCPUPercent)
	}
	if res.RSSMB > 1<<20 || res.DaemonRSSMB > 1<<20 {
		t.Errorf("rss %v MB, daemon %v MB: not plausible", res.RSSMB, res.DaemonRSSMB)
	}
	if res.Machine.CPUs <= 0 || res.Machine.GoVersion == "" || res.Machine.OS == "" || res.Machine.Arch == "" {
		t.Errorf("machine = %+v", res.Machine)
	}
	if res.Options.Inputs != 200 || res.Options.IdleWorkflows != 3 || len(res.Options.HistorySizes) != 2 {
		t.Errorf("options = %+v", res.Options)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("Run left %d entries in its directory (%v)", len(entries), err)
	}

	t.Run("the JSON names the figures as the issue does", func(t *testing.T) {
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"pipeline_runs_per_s", "floor_commits_per_s", "commits_per_run", "floor_ratio",
			"wake_latency_ms", "peek_ms", "inputs_page_ms", "idle_cpu_percent", "rss_mb", "machine", "options",
			"files_post_items_per_s", "files_post_latency_ms", "files_post_cpu_s_per_1000", "files_post_sink_delay_ms"} {
			if _, ok := m[k]; !ok {
				t.Errorf("no %q in %s", k, data)
			}
		}
		wake, _ := m["wake_latency_ms"].(map[string]any)
		if _, ok := wake["p50"]; !ok {
			t.Errorf("wake_latency_ms = %v, want p50 and p99", m["wake_latency_ms"])
		}
		if _, ok := wake["p99"]; !ok {
			t.Errorf("wake_latency_ms = %v, want p50 and p99", m["wake_latency_ms"])
		}
		peek, _ := m["peek_ms"].(map[string]any)
		page, _ := m["inputs_page_ms"].(map[string]any)
		for _, n := range []string{"1000", "5000"} {
			if _, ok := peek[n]; !ok {
				t.Errorf("peek_ms = %v, want key %s", peek, n)
			}
			if _, ok := page[n]; !ok {
				t.Errorf("inputs_page_ms = %v, want key %s", page, n)
			}
		}
		machine, _ := m["machine"].(map[string]any)
		for _, k := range []string{"cpus", "go_version", "os", "arch"} {
			if _, ok := machine[k]; !ok {
				t.Errorf("machine = %v, want %s", machine, k)
			}
		}
	})

	t.Run("the table prints every figure beside its target", func(t *testing.T) {
		var buf bytes.Buffer
		res.Table(&buf)
		out := buf.String()
		t.Log("\n" + out)
		for _, name := range []string{"pipeline_runs_per_s", "floor_commits_per_s", "commits_per_run", "floor_ratio",
			"wake_latency_ms.p50", "wake_latency_ms.p99", "peek_ms[1000]", "peek_ms[5000]", "inputs_page_ms[1000]",
			"inputs_page_ms[5000]", "idle_cpu_percent", "rss_mb", "< 5", "< 0.5", "< 100",
			"files_post_items_per_s", "files_post_latency_ms.p50", "files_post_cpu_s_per_1000", "files_post_sink_delay_ms",
			"(reported, not a target)", "judged beside Node-RED", "node_red"} {
			if !strings.Contains(out, name) {
				t.Errorf("the table has no %q:\n%s", name, out)
			}
		}
		if !strings.Contains(out, "met") {
			t.Errorf("the table has no met/missed column:\n%s", out)
		}
	})
}

func TestReadWAL(t *testing.T) {
	t.Run("a file that is not a WAL is refused", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x-wal")
		if err := os.WriteFile(p, bytes.Repeat([]byte{1}, 64), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readWAL(p); err == nil {
			t.Fatal("no error for a file without the WAL magic")
		}
	})
}

func TestPercentile(t *testing.T) {
	v := make([]float64, 200)
	for i := range v {
		v[i] = float64(i + 1)
	}
	if p := percentile(v, 50); p != 100 {
		t.Errorf("p50 = %v, want 100", p)
	}
	if p := percentile(v, 99); p != 198 {
		t.Errorf("p99 = %v, want 198", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("p50 of nothing = %v", p)
	}
}

// TestFull is `keep bench` with its defaults, for numbers on this machine:
// KEEP_BENCH_FULL=1 go test ./engine/benchmark/ -run TestFull -v -timeout 30m
// (KEEP_BENCH_JSON=path also writes the JSON object there).
func TestFull(t *testing.T) {
	if os.Getenv("KEEP_BENCH_FULL") == "" {
		t.Skip("set KEEP_BENCH_FULL=1 to run the full benchmark")
	}
	res, err := Run(context.Background(), Options{DaemonBinary: keepBin, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("KEEP_BENCH_JSON"); p != "" {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	res.Table(&buf)
	t.Logf("\n%s\n%s", data, buf.String())
}

// BenchmarkPipeline is pipeline_runs_per_s as a go benchmark, so a profile
// is one flag away: b.N inputs, 2·b.N consumer runs timed.
func BenchmarkPipeline(b *testing.B) {
	ctx := context.Background()
	k, err := newPipeline(ctx, b.TempDir(), b.N)
	if err != nil {
		b.Fatal(err)
	}
	defer k.close()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuSeconds()
	if err := k.e.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	el, cpu := time.Since(start), cpuSeconds()-cpu0
	b.StopTimer()
	if err := checkPipeline(k, b.N); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(2*b.N)/el.Seconds(), "runs/s")
	// keep's CPU (host and workers) over the drain, per 1,000 runs: what an
	// A/B on a shared machine compares best
	b.ReportMetric(cpu/float64(2*b.N)*1000, "cpu-s/1000runs")
}

// BenchmarkFloor is floor_commits_per_s as a go benchmark, to read beside
// BenchmarkPipeline: floor_ratio is runs/s ÷ (commits/s ÷ 4).
func BenchmarkFloor(b *testing.B) {
	var r Results
	if err := floor(context.Background(), Options{Dir: b.TempDir(), Logf: func(string, ...any) {}}, &r); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.FloorCommitsPerS, "commits/s")
}

// BenchmarkParallel is parallel_runs_per_s as a go benchmark: eight
// pipelines at once, each with Inputs/16 events (here 16,000 in all).
func BenchmarkParallel(b *testing.B) {
	for b.Loop() {
		var r Results
		if err := parallel(context.Background(), Options{Dir: b.TempDir(), Inputs: 16 * 1000, Logf: func(string, ...any) {}}, &r); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.ParallelRunsPerS, "runs/s")
	}
}
