// Package benchmark is `keep bench`: keep's speed, cost and scale measured
// on a temporary database with the durable settings keep runs with, side by
// side with the physical floor (raw durable SQLite commits on the same file
// system), in one run. Every figure comes from real pieces: storage.Open,
// the engine, the files and http connectors, the keep binary as a daemon.
package benchmark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Options configure Run. Zero fields take the defaults of `keep bench`.
type Options struct {
	// Dir holds the temporary databases; default a fresh os.MkdirTemp,
	// removed at the end (a Dir given by the caller is left in place, its
	// contents removed).
	Dir string `json:"-"`
	// Inputs through the pipeline (default 10000).
	Inputs int `json:"inputs"`
	// HistorySizes: consumed events in history for peek and the inputs page
	// (default 10^4, 10^5, 10^6).
	HistorySizes []int `json:"history_sizes"`
	// IdleWorkflows deployed for the idle-CPU measure (default 50).
	IdleWorkflows int `json:"idle_workflows"`
	// IdleWindow over which the idle daemon's CPU is sampled (default 10s).
	IdleWindow time.Duration `json:"-"`
	// DaemonBinary is the keep binary run as `--daemon` for the idle-CPU
	// measure (the caller passes os.Executable()). Empty: idle CPU is not
	// measured.
	DaemonBinary string `json:"-"`
	// YearDays and YearInputsPerDay size the simulated year (default 365
	// days of 100 inputs).
	YearDays         int `json:"year_days"`
	YearInputsPerDay int `json:"year_inputs_per_day"`
	// FilesPostItems: files dropped at once for the files→http row
	// (default 1000); FilesPostSinkDelay: how long its sink waits before
	// answering each POST (default 1ms).
	FilesPostItems     int           `json:"files_post_items"`
	FilesPostSinkDelay time.Duration `json:"-"`
	// NodeRed is the node-red command to measure beside the files→http
	// row; empty: $KEEP_BENCH_NODE_RED, else node-red on the PATH, else
	// the row says it was skipped. NodeRedPairs: rounds of keep and of each
	// Node-RED flow, alternating (default 2).
	NodeRed      string `json:"-"`
	NodeRedPairs int    `json:"node_red_pairs"`
	// SlowSinkItems: files per round of the slow-sink row (default 200);
	// SlowSinkPairs: its pairs of rounds, concurrency 1 then 8 (default 2).
	SlowSinkItems int `json:"slow_sink_items"`
	SlowSinkPairs int `json:"slow_sink_pairs"`
	// Logf receives progress lines; nil: silent.
	Logf func(format string, args ...any) `json:"-"`

	// roundHook, when set, runs in each files→http round's measured window
	// before the drop, given the measured pid (round.go's window.hook).
	roundHook func(pid int)
	// editWorkflow, when set, edits the files→http workflow's source, and
	// the parallel row's consumers', before they are deployed (tests: a
	// workflow whose runs fail).
	editWorkflow func(src string) string
}

// Latency is a p50/p99 pair in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// Machine says where the numbers were taken.
type Machine struct {
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUModel  string `json:"cpu_model,omitempty"`
}

// Results are one run's numbers, named as issue 8 names them.
type Results struct {
	PipelineRunsPerS float64 `json:"pipeline_runs_per_s"`
	// PipelineConsumerRuns and PipelineSeconds are what the rate divides.
	PipelineConsumerRuns int     `json:"pipeline_consumer_runs"`
	PipelineSeconds      float64 `json:"pipeline_seconds"`

	FloorCommitsPerS float64 `json:"floor_commits_per_s"`
	// CommitsPerRun: durable commits (WAL commit frames) per consumer run of
	// the pipeline; CommitsPerRunSource says how it was obtained ("wal").
	CommitsPerRun       float64 `json:"commits_per_run"`
	CommitsPerRunSource string  `json:"commits_per_run_source"`
	// SyncedCommitsPerRun: of those, the ones that waited for the disk
	// (the others reach it with the next synced one); FramesPerRun: the
	// WAL pages they wrote, which is what a sync costs.
	SyncedCommitsPerRun float64 `json:"synced_commits_per_run"`
	FramesPerRun        float64 `json:"wal_frames_per_run"`
	// FloorRatio = pipeline_runs_per_s ÷ (floor_commits_per_s ÷ 4).
	FloorRatio float64 `json:"floor_ratio"`

	// WakeLatencyMS: a producer's commit → the consumer's prepare starting
	// (its first connector call arriving), over WakeSamples samples.
	WakeLatencyMS Latency `json:"wake_latency_ms"`
	WakeSamples   int     `json:"wake_samples"`

	// PeekMS and InputsPageMS: ms per call (a page of 100 pending events;
	// the first page of 50 inputs) by consumed events in history.
	PeekMS       map[string]float64 `json:"peek_ms"`
	InputsPageMS map[string]float64 `json:"inputs_page_ms"`
	// HistoryBuildS: seconds to write each history.
	HistoryBuildS map[string]float64 `json:"history_build_s"`

	// IdleCPUPercent: the daemon's CPU (user+system, all threads, its
	// script workers' included) over the idle window with IdleWorkflows
	// deployed and nothing due, as a percent of one CPU. -1: not measured
	// (no DaemonBinary).
	IdleCPUPercent float64 `json:"idle_cpu_percent"`
	// DaemonRSSMB: the idle daemon's peak resident set (VmHWM), and its
	// live script workers' added.
	DaemonRSSMB float64 `json:"daemon_rss_mb"`
	// DaemonIdleRSSMB: the idle daemon's resident set (VmRSS) once its
	// idle script workers have retired, any left added.
	DaemonIdleRSSMB float64 `json:"daemon_idle_rss_mb"`
	// RSSMB: this process's peak resident set at the end (the bench's own
	// process, which hosts every engine it measures; not their workers).
	RSSMB float64 `json:"rss_mb"`

	YearResults
	FilesPostResults
	SlowSinkResults

	Machine  Machine `json:"machine"`
	Options  Options `json:"options"`
	IdleS    float64 `json:"idle_window_s"`
	Started  string  `json:"started"`
	ElapsedS float64 `json:"elapsed_s"`
}

func (o *Options) defaults() {
	if o.Inputs <= 0 {
		o.Inputs = 10_000
	}
	if len(o.HistorySizes) == 0 {
		o.HistorySizes = []int{10_000, 100_000, 1_000_000}
	}
	if o.IdleWorkflows <= 0 {
		o.IdleWorkflows = 50
	}
	if o.IdleWindow <= 0 {
		o.IdleWindow = 10 * time.Second
	}
	if o.YearDays <= 0 {
		o.YearDays = 365
	}
	if o.YearInputsPerDay <= 0 {
		o.YearInputsPerDay = 100
	}
	if o.FilesPostItems <= 0 {
		o.FilesPostItems = 1000
	}
	if o.NodeRedPairs <= 0 {
		o.NodeRedPairs = 2
	}
	if o.SlowSinkItems <= 0 {
		o.SlowSinkItems = 200
	}
	if o.SlowSinkPairs <= 0 {
		o.SlowSinkPairs = 2
	}
	if o.FilesPostSinkDelay <= 0 {
		o.FilesPostSinkDelay = time.Millisecond
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// quiet is the logger handed to storage and the engine: a benchmark prints
// its own lines only.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Run takes every measurement in turn, each on its own temporary database
// under o.Dir, and returns the results. It stops at the first error.
func Run(ctx context.Context, o Options) (*Results, error) {
	o.defaults()
	start := time.Now()
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "keep-bench-")
		if err != nil {
			return nil, err
		}
		o.Dir = dir
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	r := &Results{Options: o, IdleS: o.IdleWindow.Seconds(), Started: start.UTC().Format(time.RFC3339),
		Machine: machine(), IdleCPUPercent: -1,
		PeekMS: map[string]float64{}, InputsPageMS: map[string]float64{}, HistoryBuildS: map[string]float64{}}
	r.YearResults.init()
	steps := []struct {
		name string
		fn   func(context.Context, Options, *Results) error
	}{
		{"floor", floor},
		{"pipeline", pipeline},
		{"commits per run", commitsPerRun},
		{"wake latency", wakeLatency},
		{"files to http", filesPost},
		{"files to http, slow sink", slowSink},
		{"history", history},
		{"parallel workflows", parallel},
		{"a year", year},
		{"idle daemon", idle},
	}
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := fmt.Sprintf("%s/%d", o.Dir, i)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		so := o
		so.Dir = dir
		t := time.Now()
		if err := s.fn(ctx, so, r); err != nil {
			return nil, fmt.Errorf("bench %s: %w", s.name, err)
		}
		o.Logf("%s done in %s", s.name, time.Since(t).Round(time.Millisecond))
		os.RemoveAll(dir)
	}
	if r.FloorCommitsPerS > 0 {
		r.FloorRatio = r.PipelineRunsPerS / (r.FloorCommitsPerS / 4)
	}
	r.RSSMB = maxRSSMB()
	r.ElapsedS = time.Since(start).Seconds()
	return r, nil
}

// maxRSSMB is this process's peak resident set in MB (Maxrss is KiB on Linux).
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	kib := float64(ru.Maxrss)
	if runtime.GOOS == "darwin" {
		kib /= 1024 // bytes there
	}
	return kib / 1024
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// sizeKey is how a history size keys peek_ms and inputs_page_ms.
func sizeKey(n int) string { return strconv.Itoa(n) }

// Table prints one aligned table: each figure, its target and whether it
// was met.
func (r *Results) Table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tvalue\ttarget\tmet\n")
	row := func(name, value, target string, met *bool) {
		m := ""
		if met != nil {
			m = "missed"
			if *met {
				m = "met"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, value, target, m)
	}
	b := func(v bool) *bool { return &v }
	row("pipeline_runs_per_s", f1(r.PipelineRunsPerS), fmt.Sprintf("(%d consumer runs in %.2f s)", r.PipelineConsumerRuns, r.PipelineSeconds), nil)
	row("floor_commits_per_s", f1(r.FloorCommitsPerS), "(raw SQLite, synchronous=FULL)", nil)
	row("commits_per_run", fmt.Sprintf("%.2f", r.CommitsPerRun), "(source: "+r.CommitsPerRunSource+")", nil)
	row("synced_commits_per_run", fmt.Sprintf("%.2f", r.SyncedCommitsPerRun), "(the in_flight row's: the others ride on it)", nil)
	row("wal_frames_per_run", fmt.Sprintf("%.1f", r.FramesPerRun), "(pages written to the log per run, 2 KiB each)", nil)
	// reported, not judged: one fsync's rate over two seconds measures the
	// disk's neighbours as much as keep (issue 40); speed is judged side by
	// side, against Node-RED below and against the commit before a change
	row("floor_ratio", fmt.Sprintf("%.2f", r.FloorRatio), "(reported, not a target)", nil)
	row("wake_latency_ms.p50", f2(r.WakeLatencyMS.P50), "< 5", b(r.WakeLatencyMS.P50 < 5))
	row("wake_latency_ms.p99", f2(r.WakeLatencyMS.P99), fmt.Sprintf("(%d samples)", r.WakeSamples), nil)
	r.filesPostRows(row)
	r.slowSinkRows(row)
	sizes := r.Options.HistorySizes
	flat := func(name string, m map[string]float64) {
		if len(sizes) == 0 {
			return
		}
		base := m[sizeKey(sizes[0])]
		largest := sizes[len(sizes)-1]
		for _, n := range sizes {
			v := m[sizeKey(n)]
			target := fmt.Sprintf("<= 2x %s", f2(base))
			ok := v <= 2*base
			if n == largest {
				target = fmt.Sprintf("< 10, <= 2x %s", f2(base))
				ok = ok && v < 10
			}
			var met *bool
			if n != sizes[0] {
				met = b(ok)
			} else {
				target = ""
			}
			row(fmt.Sprintf("%s[%s]", name, sizeKey(n)), f2(v), target, met)
		}
	}
	flat("peek_ms", r.PeekMS)
	flat("inputs_page_ms", r.InputsPageMS)
	if r.IdleCPUPercent >= 0 {
		row("idle_cpu_percent", fmt.Sprintf("%.3f", r.IdleCPUPercent), "< 0.5", b(r.IdleCPUPercent < 0.5))
		row("daemon_rss_mb", f1(r.DaemonRSSMB), "(idle daemon's peak, its workers' added)", nil)
		row("daemon_idle_rss_mb", f1(r.DaemonIdleRSSMB), "<= 40 (idle, its workers retired)", b(r.DaemonIdleRSSMB <= 40))
	} else {
		row("idle_cpu_percent", "-", "< 0.5 (not measured: no daemon binary)", nil)
	}
	r.yearRows(row)
	row("rss_mb", f1(r.RSSMB), "< 100", b(r.RSSMB < 100))
	tw.Flush()
	fmt.Fprintf(w, "\n%d CPUs (%s), %s %s/%s; %d inputs, histories %v, %d idle workflows over %s; %.0f s\n",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Machine.OS, r.Machine.Arch, r.Options.Inputs,
		r.Options.HistorySizes, r.Options.IdleWorkflows, time.Duration(r.IdleS*float64(time.Second)), r.ElapsedS)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
